package app

import (
	"context"
	"fmt"
	"time"

	"proscenium/engine"
)

// Take states.
const (
	TakeRunning  = "running"
	TakeFinished = "finished" // Finish says why: stop, length or cancel
	TakeFailed   = "failed"   // Error says why
)

// maxTakes is how many takes the list keeps (oldest dropped first).
const maxTakes = 100

// progressEvery spaces take progress events: a fast GPU makes hundreds of
// frames a second, more than a UI needs to redraw.
const progressEvery = 100 * time.Millisecond

// Take is one entry of the takes list.
type Take struct {
	ID      int                  `json:"id"`
	Request engine.SpeechRequest `json:"request"`
	State   string               `json:"state"`
	Frames  int                  `json:"frames"`     // frames made so far
	Finish  *engine.Finish       `json:"finish"`     // set when finished
	Error   string               `json:"error"`      // set when failed
	Started int64                `json:"started_ms"` // Unix milliseconds
}

// takeRun is the take in progress.
type takeRun struct {
	take         *Take
	cancel       context.CancelFunc
	done         chan struct{}
	lastProgress time.Time
}

// takeLog is the takes list and the running take (guarded by Service.mu).
type takeLog struct {
	next    int
	list    []*Take // oldest first
	running *takeRun
}

func (l *takeLog) lastFinish() *engine.Finish {
	for i := len(l.list) - 1; i >= 0; i-- {
		if f := l.list[i].Finish; f != nil {
			c := *f
			return &c
		}
	}
	return nil
}

// Speak starts a take of req on the loaded model and returns at once; the
// take reports through "take" events and ends in the takes list. Without a
// model it returns ErrNoModel; while a take runs, ErrBusy.
func (s *Service) Speak(req engine.SpeechRequest) (Take, error) {
	if err := ValidateSpeech(req); err != nil {
		return Take{}, err
	}
	s.mu.Lock()
	if s.eng == nil {
		msg, loading := s.model.Message, s.model.State == ModelLoading
		s.mu.Unlock()
		if loading {
			return Take{}, fmt.Errorf("%w: %s", ErrNoModel, msg)
		}
		return Take{}, ErrNoModel
	}
	if s.takes.running != nil {
		id := s.takes.running.take.ID
		s.mu.Unlock()
		return Take{}, fmt.Errorf("%w: take %d is running; press Stop first", ErrBusy, id)
	}
	s.takes.next++
	t := &Take{ID: s.takes.next, Request: req, State: TakeRunning, Started: time.Now().UnixMilli()}
	ctx, cancel := context.WithCancel(context.Background())
	run := &takeRun{take: t, cancel: cancel, done: make(chan struct{})}
	s.takes.running = run
	s.takes.list = append(s.takes.list, t)
	if len(s.takes.list) > maxTakes {
		s.takes.list = append(s.takes.list[:0:0], s.takes.list[len(s.takes.list)-maxTakes:]...)
	}
	eng := s.eng
	view := *t
	s.mu.Unlock()

	s.publish(EventTake, view)
	go s.runTake(ctx, eng, run)
	return view, nil
}

func (s *Service) runTake(ctx context.Context, eng engine.Engine, run *takeRun) {
	defer close(run.done)
	defer run.cancel()
	fin, err := eng.Synthesize(ctx, run.take.Request, func(ev engine.Event) {
		if ev.Kind != engine.EventFrames {
			return
		}
		s.mu.Lock()
		run.take.Frames = ev.Frames
		now := time.Now()
		due := now.Sub(run.lastProgress) >= progressEvery
		if due {
			run.lastProgress = now
		}
		view := *run.take
		s.mu.Unlock()
		if due {
			s.publish(EventTake, view)
		}
	})

	s.mu.Lock()
	t := run.take
	switch {
	case err != nil:
		t.State, t.Error = TakeFailed, err.Error()
	case fin == nil:
		t.State, t.Error = TakeFailed, "the engine ended the take without a result"
	default:
		c := *fin
		t.State, t.Finish, t.Frames = TakeFinished, &c, c.Frames
	}
	s.takes.running = nil
	view := *t
	s.mu.Unlock()
	s.publish(EventTake, view)
	s.publish(EventStats, s.Stats())
}

// Stop ends the running take at its next frame, keeping what it made, and
// waits until it has ended. It reports whether a take was running.
func (s *Service) Stop() (bool, error) {
	s.mu.Lock()
	run := s.takes.running
	s.mu.Unlock()
	if run == nil {
		return false, nil
	}
	run.cancel()
	<-run.done
	return true, nil
}

// Takes lists the takes of this session, newest first.
func (s *Service) Takes() []Take {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Take, 0, len(s.takes.list))
	for i := len(s.takes.list) - 1; i >= 0; i-- {
		out = append(out, *s.takes.list[i])
	}
	return out
}

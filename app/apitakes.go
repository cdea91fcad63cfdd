package app

import (
	"context"
	"time"

	"proscenium/engine"
)

// Take sources.
const (
	SourceStudio = "studio" // Speak or Re-run in the studio
	SourceAPI    = "api"    // POST /v1/audio/speech
)

// APIEngine returns the loaded engine (as LoadedEngine) wrapped so that
// every take the speech API makes is recorded like a studio take: it
// appears in the takes list marked SourceAPI, reports through "take" and
// "audio" events while it runs, and is stored under the takes directory.
// It is a function, not a method, so that the UI bindings do not expose it.
func APIEngine(s *Service) (engine.Engine, error) {
	eng, err := LoadedEngine(s)
	if err != nil {
		return nil, err
	}
	return &apiEngine{Engine: eng, svc: s}, nil
}

type apiEngine struct {
	engine.Engine
	svc *Service
}

// Synthesize records the take, then runs it on the engine (which waits for
// a take already running, studio or API).
func (e *apiEngine) Synthesize(ctx context.Context, req engine.SpeechRequest, emit func(engine.Event)) (*engine.Finish, error) {
	s := e.svc
	info := e.Engine.Info()
	s.mu.Lock()
	s.takes.next++
	t := &Take{ID: s.takes.next, Request: req, State: TakeRunning, Started: time.Now().UnixMilli(),
		SampleRate: info.SampleRate, Source: SourceAPI}
	ctx, cancel := context.WithCancel(ctx)
	run := &takeRun{rec: &takeRecord{take: t}, cancel: cancel, done: make(chan struct{})}
	s.takes.list = append(s.takes.list, run.rec)
	view := *t
	s.mu.Unlock()
	defer close(run.done)
	defer cancel()
	s.publish(EventTake, view)

	spf := info.SamplesPerFrame
	audioRate := float64(info.SampleRate) / float64(max(spf, 1))
	fin, err := e.Engine.Synthesize(ctx, req, func(ev engine.Event) {
		switch ev.Kind {
		case engine.EventFrames:
			s.takeFrames(run, ev.Frames)
		case engine.EventAudio:
			s.takeAudio(run, ev.Audio, spf, audioRate)
		}
		emit(ev)
	})
	s.endTake(run, fin, err, 0)
	return fin, err
}

package takes

import (
	"context"
	"time"

	"proscenium/app/studio"
	"proscenium/engine/api"
)

// Take sources.
const (
	SourceStudio = "studio" // Speak or Re-run in the studio
	SourceAPI    = "api"    // POST /v1/audio/speech
)

// Recorded wraps eng (the loaded model) so that every take the speech API
// makes on it is recorded like a studio take: it appears in the list
// marked SourceAPI, reports through "take" and "audio" events while it
// runs, and is stored under the takes directory.
func (l *List) Recorded(eng api.Engine) api.Engine {
	return &apiEngine{Engine: eng, list: l}
}

type apiEngine struct {
	api.Engine
	list *List
}

// Synthesize records the take, then runs it on the engine (which waits for
// a take already running, studio or API).
func (e *apiEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	l := e.list
	info := e.Engine.Info()
	spoken := l.spokenText(req.Text)
	l.mu.Lock()
	l.next++
	t := &Take{ID: l.next, Request: req, State: TakeRunning, Started: time.Now().UnixMilli(),
		SampleRate: info.SampleRate, Source: SourceAPI, Spoken: spoken}
	ctx, cancel := context.WithCancel(ctx)
	run := &takeRun{rec: &takeRecord{take: t}, cancel: cancel, done: make(chan struct{})}
	l.list = append(l.list, run.rec)
	view := *t
	l.mu.Unlock()
	defer close(run.done)
	defer cancel()
	l.events.Send(studio.EventTake, view)

	spf := info.SamplesPerFrame
	audioRate := float64(info.SampleRate) / float64(max(spf, 1))
	fin, err := e.Engine.Synthesize(ctx, engineRequest(t), func(ev api.Event) {
		switch ev.Kind {
		case api.EventFrames:
			l.takeFrames(run, ev.Frames)
		case api.EventAudio:
			l.takeAudio(run, ev.Audio, spf, audioRate)
		}
		emit(ev)
	})
	l.endTake(run, fin, err, 0)
	return fin, err
}

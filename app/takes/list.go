// Package takes owns the studio's takes: the list (studio and speech API
// takes alike) and the takes running now (one, or Speak ×N's variations), each take's audio while it is
// made, the takes directory on disk (one folder per take, written through
// a temporary folder), the takes' size limit and which takes it evicts,
// waveform peaks, and export to WAV or raw PCM.
//
// It runs a take on the engine app hands it (Config.Engine) and never
// loads or chooses a model; it reads the size limit from the settings
// through Config.Limit and never writes settings. Its List has its own lock.
package takes

import (
	"sync"
	"time"

	"proscenium/app/playback"
	"proscenium/app/studio"
	"proscenium/engine/api"
)

// Config wires a List.
type Config struct {
	// Dir holds the takes (DefaultDir); "" keeps them in memory.
	Dir string
	// Events receives the takes' events; nil drops them.
	Events *studio.Hub
	// Speaker plays a take live while it is made; nil plays nothing.
	Speaker playback.Speaker
	// Limit is the takes' size limit in bytes (the settings'); it is called
	// without the list's lock held.
	Limit func() int64
	// Engine is the loaded model a studio take runs on and its sample
	// rate, or the error saying why there is none. It is called with the
	// list's lock held, so it must not call back into the List.
	Engine func() (api.Engine, int, error)
	// OnEnd, when set, is called after a take has ended and been stored.
	OnEnd func()
	// Keep, when set, names the takes never removed to make room for a new
	// one (the projects' chosen takes); it is called without the list's
	// lock held.
	Keep func() map[int]bool
	// Spoken, when set, is the text the engine is given for a take's text
	// as written (the settings' pronunciation lexicon applied, app/lexicon);
	// the take keeps both. It is called without the list's lock held.
	Spoken func(text string) string
}

// List is the takes list. It is safe for concurrent use.
type List struct {
	events  *studio.Hub
	speaker playback.Speaker
	limit   func() int64
	engine  func() (api.Engine, int, error)
	onEnd   func()
	keep    func() map[int]bool
	spoken  func(string) string

	mu      sync.Mutex
	next    int
	list    []*takeRecord // oldest first
	running []*takeRun    // the studio's takes being made: one, or a Speak ×N group
	store   takeStore
	stored  int64 // bytes on disk
}

// spokenText is what the engine is given for text: "" when it is text
// itself.
func (l *List) spokenText(text string) string {
	if l.spoken == nil {
		return ""
	}
	if s := l.spoken(text); s != text {
		return s
	}
	return ""
}

// engineRequest is t's request as the engine is given it.
func engineRequest(t *Take) api.SpeechRequest {
	req := t.Request
	if t.Spoken != "" {
		req.Text = t.Spoken
	}
	return req
}

// Open reads the takes found in cfg.Dir. A take directory that does not
// load is skipped with a warning, and leftovers of interrupted saves are
// removed; neither stops the studio.
func Open(cfg Config) (*List, []string) {
	l := &List{events: cfg.Events, speaker: cfg.Speaker, limit: cfg.Limit, engine: cfg.Engine, onEnd: cfg.OnEnd,
		keep: cfg.Keep, spoken: cfg.Spoken, store: takeStore{dir: cfg.Dir}}
	if l.speaker == nil {
		l.speaker = playback.NoSpeaker{}
	}
	_, leftover, warnings := l.store.cleanTemps(time.Now())
	l.stored = leftover // counted against the limit until removed
	recs, problems, maxID := l.store.loadAll()
	warnings = append(warnings, problems...)
	l.next = maxID
	for _, r := range recs {
		l.list = append(l.list, r)
		l.stored += r.bytes
	}
	return l, warnings
}

// Usage is the takes directory and the bytes the takes hold there.
func (l *List) Usage() (dir string, bytes int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.store.dir, l.stored
}

// Running reports whether a studio take is running.
func (l *List) Running() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.running) > 0
}

// Package voiceprime keeps the loaded engine's voice cache primed with the
// voices the user is about to speak in (api.VoicePrimer): a voice just
// created, and the voices cast in the open project when it opens, when its
// cast changes and when a model loads. The first take in such a voice then
// starts from the cache instead of prefilling the voice's reference first
// (docs/PERF.md, "Voice prefix cache": on the H200 a 10 s voice's first
// audio is 71 ms uncached and 31 ms from the cache; far more on the smaller
// cards and the CPU).
//
// Priming runs in the background, one voice at a time, and the engine runs
// a prime only while no take is running or waiting: a take sent meanwhile
// waits at most for the one voice's prefill under way. A voice primed on the loaded engine is not primed again until
// another engine loads (its recording's library id names it: a voice
// replaced by a new recording primes anew). Each outcome goes to
// Config.Primed (the studio's status line): a failure stops nothing, since
// the take that needs the voice prefills it.
package voiceprime

import (
	"context"
	"errors"
	"slices"
	"sync"

	"proscenium/engine/api"
)

// Voice is a voice to prime: its reference recording's id (what names the
// voice's state; "" for a voice without one, which has nothing to prime)
// and its references, read when its turn comes.
type Voice struct {
	Name       string
	Reference  string
	References func() ([]api.Reference, error)
}

// Config wires a Primer.
type Config struct {
	// Engine returns the loaded engine, or why there is none.
	Engine func() (api.Engine, error)
	// Primed is told of each prime that ran (err nil) or failed; nil: not
	// told. It is called on the primer's goroutine.
	Primed func(v Voice, p *api.Primed, err error)
}

// Primer primes voices in the background, in the order asked.
type Primer struct {
	cfg Config

	mu      sync.Mutex
	cast    []Voice // the open project's (Cast), queued again when a model loads (Loaded)
	queue   []Voice
	running bool
	on      api.Engine      // the engine done is for
	done    map[string]bool // reference ids primed (or found not primeable) on it
	idle    *sync.Cond      // signalled when the queue empties and the goroutine ends (Wait)
}

// New makes a Primer.
func New(cfg Config) *Primer {
	p := &Primer{cfg: cfg, done: map[string]bool{}}
	p.idle = sync.NewCond(&p.mu)
	return p
}

// Prime queues vs (voices without a recording are skipped) and returns at
// once.
func (p *Primer) Prime(vs ...Voice) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, v := range vs {
		if v.Reference != "" && v.References != nil {
			p.queue = append(p.queue, v)
		}
	}
	if len(p.queue) > 0 && !p.running {
		p.running = true
		go p.run()
	}
}

// Cast queues the open project's cast voices and keeps them: Loaded queues
// them again.
func (p *Primer) Cast(vs ...Voice) {
	p.mu.Lock()
	p.cast = slices.Clone(vs)
	p.mu.Unlock()
	p.Prime(vs...)
}

// Loaded queues the open project's cast voices: a model has loaded, its
// voice cache empty.
func (p *Primer) Loaded() {
	p.mu.Lock()
	cast := p.cast
	p.mu.Unlock()
	p.Prime(cast...)
}

// Wait returns when nothing is queued or priming (tests; shutdown need not:
// closing the engine ends a prime).
func (p *Primer) Wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.running {
		p.idle.Wait()
	}
}

// next takes the next voice to prime on eng (false: none left, and the
// goroutine ends: a later Prime starts another), dropping those done on it;
// a new engine starts afresh. eng nil: nothing can be primed now, and the
// queue is dropped (the next load's voices are queued again).
func (p *Primer) next(eng api.Engine) (Voice, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if eng == nil {
		p.queue = nil
	}
	if eng != p.on {
		p.on, p.done = eng, map[string]bool{}
	}
	for len(p.queue) > 0 {
		v := p.queue[0]
		p.queue = p.queue[1:]
		if !p.done[v.Reference] {
			return v, true
		}
	}
	p.running = false
	p.idle.Broadcast()
	return Voice{}, false
}

func (p *Primer) run() {
	for {
		eng, err := p.cfg.Engine()
		vp, ok := eng.(api.VoicePrimer)
		if err != nil || !ok {
			eng, vp = nil, nil // no model, or one that keeps no voice cache
		}
		v, ok := p.next(eng)
		if !ok {
			return
		}
		refs, err := v.References()
		var primed *api.Primed
		if err == nil {
			primed, err = vp.PrimeVoice(context.Background(), refs)
		}
		p.mu.Lock()
		if eng == p.on && (err == nil || errors.Is(err, api.ErrInvalidRequest) || errors.Is(err, api.ErrNoVoiceCache)) {
			p.done[v.Reference] = true // primed, or never primeable on this engine
		}
		p.mu.Unlock()
		if p.cfg.Primed != nil {
			p.cfg.Primed(v, primed, err)
		}
	}
}

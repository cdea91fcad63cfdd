// Package voiceprime keeps the loaded engine's voice cache primed with the
// voices the user is about to speak in (api.VoicePrimer): a voice just
// created, and the voices cast in the open project when it opens, when its
// cast changes and when a model loads. The first take in such a voice then
// starts from the cache instead of prefilling the voice's reference first
// (docs/PERF.md, "Voice prefix cache": on the H200 a 10 s voice's first
// audio is 71 ms uncached and 31 ms from the cache; far more on the smaller
// cards and the CPU).
//
// A cast of several voices is primed twice over: each voice alone (a line
// spoken in its speaker's voice) and all of them together (the whole
// script's take, whose one prompt holds every cast voice's reference, is
// another voice prefix). The voices together are primed last and only when
// the cache can hold them beside each voice alone, so that priming them
// never drops a voice of the cast. When it cannot, the engine is asked for
// their key instead (api.VoicePrimer.VoiceKey): the whole script's take
// still leaves them in the cache, and Held then says so.
//
// Priming runs in the background, one voice at a time, and the engine runs
// a prime only while no take is running or waiting: a take sent meanwhile
// waits at most for the one voice's prefill under way. A voice primed on
// the loaded engine is not primed again until another engine loads (its
// recording's library id names it: a voice replaced by a new recording
// primes anew), except as the open project's cast: when the cast changes,
// its voices are asked for again, and the engine finds a voice it holds
// (marking it recently used, which keeps the cast's voices the last the
// cache drops) and primes one it dropped. Each outcome goes to
// Config.Primed (the studio's status line): a failure stops nothing, since
// the take that needs the voice prefills it.
package voiceprime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/engine/api"
)

// Voice is a voice to prime: its reference recording's id (what names the
// voice's state; "" for a voice without one, which has nothing to prime)
// and its references, read when its turn comes.
type Voice struct {
	Name       string
	Reference  string
	References func() ([]api.Reference, error)
	// Together names the cast voices this one speaks in together (the
	// whole script's take: their references in one prompt), in the cast's
	// order; nil for one voice. Reference then joins theirs.
	Together []string
	parts    []string // Together's reference ids
}

// ErrNoRoom: the cast's voices together were not primed, since the voice
// cache cannot hold them beside each of them alone.
var ErrNoRoom = errors.New("the voice cache cannot hold the cast's voices together beside each alone")

// errPartNotCached: a voice of a cast's voices together is not in the cache
// (its own prime failed, and said so): they are not primed together, and
// nothing more is told.
var errPartNotCached = errors.New("not in the voice cache")

// Config wires a Primer.
type Config struct {
	// Engine returns the loaded engine, or why there is none.
	Engine func() (api.Engine, error)
	// Primed is told of each prime that ran (err nil) or failed; nil: not
	// told. It is called on the primer's goroutine.
	Primed func(v Voice, p *api.Primed, err error)
	// Busy reports whether a take is running or waiting: the cast is not
	// restored then (the take's end asks again). nil: never busy.
	Busy func() bool
	// RestoreAfter is how long after the last take ended the cast's
	// dropped voices are primed again (TakeEnded); 0: DefaultRestoreAfter.
	RestoreAfter time.Duration
}

// DefaultRestoreAfter is Config.RestoreAfter's default: long enough that
// takes in another voice, a few seconds apart, keep that voice in the cache
// (restoring the cast would drop it); short enough that the cast is ready
// again when the user turns back to the script.
const DefaultRestoreAfter = 15 * time.Second

// Primer primes voices in the background, in the order asked.
type Primer struct {
	cfg Config

	mu      sync.Mutex
	cast    []Voice // the open project's (Cast), queued again when a model loads (Loaded)
	queue   []queued
	running bool
	on      api.Engine       // the engine done is for
	done    map[string]state // reference ids primed on it (or found never primeable there)
	idle    *sync.Cond       // signalled when the queue empties and the goroutine ends (Wait)
	restore *time.Timer      // TakeEnded's, nil before the first take ends
	stopped bool             // Stop: no more restores
}

// state is what a voice's prime said of its state: its rows, the bytes it
// holds in the cache (0: never primeable on this engine) and its key there
// (api.Primed.Key; for a voice not primed, api.VoicePrimer.VoiceKey's, or
// "").
type state struct {
	rows  int
	bytes int64
	key   string
}

// queued is a voice waiting for its turn; cast: the open project's, asked
// for again even when primed before (done).
type queued struct {
	v    Voice
	cast bool
}

// New makes a Primer.
func New(cfg Config) *Primer {
	p := &Primer{cfg: cfg, done: map[string]state{}}
	p.idle = sync.NewCond(&p.mu)
	return p
}

// Prime queues vs (voices without a recording are skipped) and returns at
// once.
func (p *Primer) Prime(vs ...Voice) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.enqueueLocked(vs, false)
}

func (p *Primer) enqueueLocked(vs []Voice, cast bool) {
	for _, v := range vs {
		if v.Reference != "" && v.References != nil {
			p.queue = append(p.queue, queued{v, cast})
		}
	}
	if len(p.queue) > 0 && !p.running {
		p.running = true
		go p.run()
	}
}

// Cast queues the open project's cast (vs: speaker 0's voice first; one
// without a recording is the model's own), each voice alone and, when
// every speaker has a recorded voice and there are several, the voices
// together. It keeps them: Loaded queues them again. The cast as it was
// (a project saved again) queues nothing.
func (p *Primer) Cast(vs ...Voice) {
	p.mu.Lock()
	defer p.mu.Unlock()
	same := func(a, b Voice) bool { return a.Name == b.Name && a.Reference == b.Reference }
	if p.cast != nil && slices.EqualFunc(vs, p.cast, same) {
		return
	}
	p.cast = slices.Clone(vs)
	p.enqueueCastLocked()
}

// Loaded queues the open project's cast voices: a model has loaded, its
// voice cache empty.
func (p *Primer) Loaded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.enqueueCastLocked()
}

func (p *Primer) enqueueCastLocked() { p.enqueueLocked(p.castVoicesLocked(), true) }

// castVoicesLocked is what the open project's cast primes: each voice and,
// last, the voices together (when the script speaks them).
func (p *Primer) castVoicesLocked() []Voice {
	if t, ok := together(p.cast); ok {
		return append(slices.Clone(p.cast), t)
	}
	return p.cast
}

// together is the voice of vs spoken together, as the whole script's take
// speaks them (api.Reference lists concatenated in the cast's order);
// false when fewer than two, or one has no recording (that take is not
// made then).
func together(vs []Voice) (Voice, bool) {
	if len(vs) < 2 || slices.ContainsFunc(vs, func(v Voice) bool { return v.Reference == "" || v.References == nil }) {
		return Voice{}, false
	}
	t := Voice{}
	for _, v := range vs {
		t.Together = append(t.Together, v.Name)
		t.parts = append(t.parts, v.Reference)
	}
	t.Name = strings.Join(t.Together, " + ")
	t.Reference = strings.Join(t.parts, "+")
	parts := slices.Clone(vs)
	t.References = func() ([]api.Reference, error) {
		var refs []api.Reference
		for _, v := range parts {
			r, err := v.References()
			if err != nil {
				return nil, err // the voice's own error names it
			}
			refs = append(refs, r...)
		}
		return refs, nil
	}
	return t, true
}

// Held is what of the voices asked for on eng its voice cache holds now,
// by keys (eng's api.Memory.VoiceKeys): the recording ids of the voices
// held (a cast's voices together by their Voice.Reference, the ids
// joined), and whether the open project's cast spoken together is among
// them (the whole script's take starts from the cache). A voice that was
// not primed (the cache had no room for it then) counts once a take in it
// left it in the cache. Nothing when eng is not the engine the primer
// primes on.
func (p *Primer) Held(eng api.Engine, keys []string) (refs map[string]bool, cast bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	refs = map[string]bool{}
	if eng == nil || eng != p.on || len(keys) == 0 {
		return refs, false
	}
	for ref, st := range p.done {
		if st.key != "" && slices.Contains(keys, st.key) {
			refs[ref] = true
		}
	}
	t, ok := together(p.cast)
	return refs, ok && refs[t.Reference]
}

// TakeEnded tells the primer that a take ended: RestoreAfter later, unless
// another take ends before (which waits anew) or runs then, the voices of
// the open project's cast the voice cache dropped meanwhile are primed
// again (Restore, with the loaded engine's voice keys).
func (p *Primer) TakeEnded() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	if p.restore != nil {
		p.restore.Stop()
	}
	d := p.cfg.RestoreAfter
	if d <= 0 {
		d = DefaultRestoreAfter
	}
	p.restore = time.AfterFunc(d, p.restoreDue)
}

// Stop ends the restores TakeEnded has due (the studio closes).
func (p *Primer) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	if p.restore != nil {
		p.restore.Stop()
	}
}

func (p *Primer) restoreDue() {
	if p.cfg.Busy != nil && p.cfg.Busy() {
		return
	}
	eng, err := p.cfg.Engine()
	if err != nil || eng == nil {
		return
	}
	p.Restore(eng, eng.Stats().Memory.VoiceKeys) // an engine without a voice cache is never p.on
}

// Restore queues the open project's cast again when eng's voice cache no
// longer holds each of its voices, by keys (eng's api.Memory.VoiceKeys): the
// voices held first, which the engine marks recently used, then those
// dropped, so that priming one drops a voice outside the cast. Only a cast
// that fit the cache whole is restored: each voice, and the voices together
// when the script speaks them, primed on eng and kept. A cast that did not
// fit would drop one of its voices for each one primed again. Nothing is
// queued while voices are being primed. It reports whether it queued.
func (p *Primer) Restore(eng api.Engine, keys []string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if eng == nil || eng != p.on || p.running || p.stopped {
		return false
	}
	var held, dropped []Voice
	for _, v := range p.castVoicesLocked() {
		if v.Reference == "" || v.References == nil {
			continue // the model's own voice
		}
		st, primed := p.done[v.Reference]
		if !primed || st.bytes == 0 || st.key == "" {
			return false // not primed on eng, or not kept there
		}
		if slices.Contains(keys, st.key) {
			held = append(held, v)
		} else {
			dropped = append(dropped, v)
		}
	}
	if len(dropped) == 0 {
		return false
	}
	p.enqueueLocked(append(held, dropped...), true)
	return true
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
// goroutine ends: a later Prime starts another), dropping those done on it
// (a cast's voice only when it is never primeable there); a new engine starts
// afresh. eng nil: nothing can be primed now, and the queue is dropped
// (the next load's voices are queued again).
func (p *Primer) next(eng api.Engine) (Voice, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if eng == nil {
		p.queue = nil
	}
	if eng != p.on {
		p.on, p.done = eng, map[string]state{}
	}
	for len(p.queue) > 0 {
		q := p.queue[0]
		p.queue = p.queue[1:]
		if st, done := p.done[q.v.Reference]; !done || (q.cast && st.bytes > 0) {
			return q.v, true
		}
	}
	p.running = false
	p.idle.Broadcast()
	return Voice{}, false
}

// room is why t (voices together) is not to be primed on eng: ErrNoRoom
// when the cache cannot hold its state beside each of its voices'
// (togetherBytes); another error when a voice of it was not primed (it
// would not be kept either).
func (p *Primer) room(eng api.Engine, t Voice) error {
	p.mu.Lock()
	parts := make([]state, len(t.parts))
	for i, ref := range t.parts {
		parts[i] = p.done[ref]
		if parts[i].bytes == 0 {
			p.mu.Unlock()
			return fmt.Errorf("voice %q: %w", t.Together[i], errPartNotCached)
		}
	}
	p.mu.Unlock()
	var alone int64
	for _, s := range parts {
		alone += s.bytes
	}
	together := togetherBytes(parts)
	if c := eng.Stats().Memory.VoiceCacheCap; alone+together > c {
		return fmt.Errorf("%w: their states take %s alone and at most %s together, and the cache holds %s (a voice cache of %s would hold them)",
			ErrNoRoom, studio.ByteSize(alone), studio.ByteSize(together), studio.ByteSize(c), studio.ByteSize(cacheToAsk(alone+together)))
	}
	return nil
}

// cacheToAsk is a voice cache the settings take that holds n bytes: n
// rounded up to a whole MiB, at least settings.MinVoiceCache.
func cacheToAsk(n int64) int64 { return max((n+1<<20-1)&^(1<<20-1), settings.MinVoiceCache) }

// togetherBytes bounds from above the state of voices spoken together. A
// state is a part that does not depend on the voice (the DeltaNet states)
// and the same bytes for each of its rows (K and V), so two voices of
// different rows give both, and the voices together, with at most the sum
// of their rows (one system text instead of one each), hold at most the
// fixed part and their rows'. Without two such voices, or when the parts
// do not fit that shape, the bound is the sum of their states.
func togetherBytes(parts []state) int64 {
	var sum, most int64
	rows := 0
	lo, hi := parts[0], parts[0]
	for _, s := range parts {
		sum, most, rows = sum+s.bytes, max(most, s.bytes), rows+s.rows
		if s.rows < lo.rows {
			lo = s
		}
		if s.rows > hi.rows {
			hi = s
		}
	}
	if hi.rows == lo.rows || hi.bytes < lo.bytes {
		return sum
	}
	perRow := float64(hi.bytes-lo.bytes) / float64(hi.rows-lo.rows)
	fixed := float64(lo.bytes) - perRow*float64(lo.rows)
	if fixed < 0 {
		return sum
	}
	return min(max(int64(math.Ceil(fixed+perRow*float64(rows))), most), sum)
}

// voiceKey is the key vp's voice cache would keep v under (refs: v's
// references, nil when not read yet), asked for a voice not primed: a take
// in it may still cache it, and Held then names it. "" when refs cannot be
// read or the engine gives no key (Held then never names the voice).
func voiceKey(vp api.VoicePrimer, v Voice, refs []api.Reference) string {
	var err error
	if refs == nil {
		if refs, err = v.References(); err != nil {
			return ""
		}
	}
	key, err := vp.VoiceKey(refs)
	if err != nil {
		return ""
	}
	return key
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
		var primed *api.Primed
		var refs []api.Reference
		if v.Together != nil {
			err = p.room(eng, v)
		}
		if err == nil {
			if refs, err = v.References(); err == nil {
				primed, err = vp.PrimeVoice(context.Background(), refs)
			}
		}
		key := ""
		if errors.Is(err, ErrNoRoom) || errors.Is(err, api.ErrVoiceNotKept) {
			key = voiceKey(vp, v, refs)
		}
		p.mu.Lock()
		if eng == p.on {
			switch {
			case err == nil:
				p.done[v.Reference] = state{primed.PrefixRows, primed.Bytes, primed.Key}
			case errors.Is(err, api.ErrInvalidRequest) || errors.Is(err, api.ErrNoVoiceCache) || errors.Is(err, api.ErrVoiceNotKept) || errors.Is(err, ErrNoRoom):
				p.done[v.Reference] = state{key: key} // never primeable on this engine; a take in it may cache it
			}
		}
		p.mu.Unlock()
		if p.cfg.Primed != nil && !errors.Is(err, errPartNotCached) {
			p.cfg.Primed(v, primed, err)
		}
	}
}

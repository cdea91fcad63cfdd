package voiceprime

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"proscenium/app/internal/enginetest"
	"proscenium/engine/api"
)

// primingEngine is an api.Engine with a voice cache of cap bytes (100 when
// 0; a voice of voiceOf's holds 21).
type primingEngine struct {
	api.Engine // only PrimeVoice and Stats are called
	enginetest.VoiceCache
	cap int64
}

func newPrimingEngine(cap int64) *primingEngine {
	if cap == 0 {
		cap = 100
	}
	return &primingEngine{VoiceCache: enginetest.VoiceCache{RowBytes: 1}, cap: cap}
}

func (e *primingEngine) Stats() api.Stats {
	return api.Stats{Memory: api.Memory{VoiceCacheCap: e.cap, VoiceKeys: e.Held()}}
}

// voiceOf is a voice whose one reference's transcript is its recording id,
// one frame long.
func voiceOf(name, reference string) Voice { return voiceOfFrames(name, reference, 1) }

// voiceOfFrames is voiceOf with a reference of frames frames.
func voiceOfFrames(name, reference string, frames int) Voice {
	return Voice{Name: name, Reference: reference, References: func() ([]api.Reference, error) {
		if reference == "gone" {
			return nil, errors.New("its recording is no longer in the voice library")
		}
		return []api.Reference{{Transcript: reference, Codes: make([][]int, frames)}}, nil
	}}
}

// Voices are primed in the order asked, each once on an engine (a voice
// sharing another's recording too); voices without a recording, and a
// voice whose references cannot be read, are skipped (the failure told);
// a new engine primes them again; with no engine the queue is dropped.
func TestPrimer(t *testing.T) {
	var mu sync.Mutex
	var eng api.Engine
	var told []string
	p := New(Config{
		Engine: func() (api.Engine, error) {
			mu.Lock()
			defer mu.Unlock()
			if eng == nil {
				return nil, errors.New("no model loaded")
			}
			return eng, nil
		},
		Primed: func(v Voice, pr *api.Primed, err error) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, fmt.Sprintf("%s %v", v.Name, err))
		},
	})
	setEngine := func(e api.Engine) {
		mu.Lock()
		eng = e
		mu.Unlock()
	}

	first := newPrimingEngine(0)
	setEngine(first)
	p.Prime(voiceOf("Ada", "a"), Voice{Name: "plain"}, voiceOf("Bea", "b"), voiceOf("Ada again", "a"), voiceOf("Cy", "gone"))
	p.Wait()
	p.Prime(voiceOf("Bea", "b"), voiceOf("Dee", "d"))
	p.Wait()
	if got, want := first.Asked(), []string{"a", "b", "d"}; !slices.Equal(got, want) {
		t.Fatalf("primed %v on the first engine, want %v", got, want)
	}
	mu.Lock()
	if want := []string{"Ada <nil>", "Bea <nil>", "Cy its recording is no longer in the voice library", "Dee <nil>"}; !slices.Equal(told, want) {
		t.Errorf("told %q, want %q", told, want)
	}
	mu.Unlock()

	second := newPrimingEngine(0)
	setEngine(second)
	p.Prime(voiceOf("Ada", "a"))
	p.Wait()
	if got := second.Asked(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("primed %v on a newly loaded engine, want [a]", got)
	}

	setEngine(nil)
	p.Prime(voiceOf("Eve", "e"))
	p.Wait()
	setEngine(second)
	p.Prime(voiceOf("Fay", "f"))
	p.Wait()
	if got := second.Asked(); !slices.Equal(got, []string{"a", "f"}) {
		t.Fatalf("primed %v: the voice queued with no model loaded must be dropped, want [a f]", got)
	}

	// The open project's cast is primed when cast, each voice and then the
	// voices together, and again when a model loads.
	third := newPrimingEngine(0)
	setEngine(third)
	p.Cast(voiceOf("Gil", "g"), voiceOf("Hal", "h"))
	p.Wait()
	fourth := newPrimingEngine(0)
	setEngine(fourth)
	p.Loaded()
	p.Wait()
	if a, b := third.Asked(), fourth.Asked(); !slices.Equal(a, []string{"g", "h", "g+h"}) || !slices.Equal(b, a) {
		t.Fatalf("the cast primed %v when cast and %v after a load, want [g h g+h] both times", a, b)
	}

	// An engine without a voice cache is asked once per voice.
	plain := newPrimingEngine(0)
	plain.NoCache = true
	setEngine(plain)
	p.Prime(voiceOf("Ada", "a"), voiceOf("Ada", "a"))
	p.Wait()
	mu.Lock()
	if n := len(told); told[n-1] != "Ada "+api.ErrNoVoiceCache.Error() || told[n-2] == told[n-1] {
		t.Errorf("told %q: want one refusal for Ada", told[n-3:])
	}
	mu.Unlock()
}

// A cast of several voices is primed alone and together, the voices
// together as the whole script's take speaks them (every speaker's
// references, in the cast's order) and only when the cache holds them
// beside each voice alone; a cast as it was queues nothing, a changed one
// asks again for voices primed before (the engine finds those it holds).
// (Broken, the whole script's first take would prefill every voice.)
func TestPrimerCastTogether(t *testing.T) {
	var mu sync.Mutex
	var eng api.Engine
	var told []string
	p := New(Config{
		Engine: func() (api.Engine, error) { mu.Lock(); defer mu.Unlock(); return eng, nil },
		Primed: func(v Voice, pr *api.Primed, err error) {
			mu.Lock()
			defer mu.Unlock()
			told = append(told, fmt.Sprintf("%s: %v", v.Name, err))
		},
	})
	use := func(e *primingEngine) {
		mu.Lock()
		eng, told = e, nil
		mu.Unlock()
	}
	tell := func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(told) }
	ada, bea, cy := voiceOf("Ada", "a"), voiceOf("Bea", "b"), voiceOf("Cy", "c")

	e := newPrimingEngine(0)
	use(e)
	p.Prime(ada)
	p.Wait()
	p.Cast(bea, ada)
	p.Wait()
	p.Cast(bea, ada) // saved again
	p.Wait()
	if got, want := e.Asked(), []string{"a", "b", "a (held)", "b+a"}; !slices.Equal(got, want) {
		t.Fatalf("primed %q, want %q: each voice, then the voices together in the cast's order, once", got, want)
	}
	if got := tell(); !slices.Equal(got, []string{"Ada: <nil>", "Bea: <nil>", "Ada: <nil>", "Bea + Ada: <nil>"}) {
		t.Errorf("told %q", got)
	}

	// A speaker without a recorded voice: no whole-script take in voices,
	// nothing together; one voice cast: nothing together either.
	p.Cast(bea, Voice{Name: ""}, ada)
	p.Wait()
	p.Cast(cy)
	p.Wait()
	if got, want := e.Asked()[4:], []string{"b (held)", "a (held)", "c"}; !slices.Equal(got, want) {
		t.Fatalf("primed %q, want %q", got, want)
	}

	// A voice whose references cannot be read: the voices together are not
	// primed, and only the voice's failure is told.
	use(e)
	p.Cast(ada, voiceOf("Gone", "gone"))
	p.Wait()
	if got := e.Asked()[7:]; !slices.Equal(got, []string{"a (held)"}) {
		t.Fatalf("primed %q, want Ada's alone", got)
	}
	if got := tell(); len(got) != 2 || !strings.HasPrefix(got[1], "Gone: its recording") {
		t.Errorf("told %q, want Ada's prime and Gone's failure", got)
	}

	// A cache too small for the voices together beside them alone (2 × 42
	// bytes > 30): told once, on that engine.
	small := newPrimingEngine(30)
	use(small)
	p.Cast(ada, bea)
	p.Wait()
	p.Loaded()
	p.Wait()
	if got, want := small.Asked(), []string{"a", "b", "a (held)", "b (held)"}; !slices.Equal(got, want) {
		t.Fatalf("primed %q, want %q", got, want)
	}
	refusals := slices.DeleteFunc(tell(), func(s string) bool { return !strings.Contains(s, ErrNoRoom.Error()) })
	if len(refusals) != 1 || !strings.HasPrefix(refusals[0], "Ada + Bea: ") || !strings.Contains(refusals[0], "take 42 B alone and at most 42 B together") ||
		!strings.Contains(refusals[0], "(a voice cache of 64.0 MiB would hold them)") {
		t.Errorf("told %q: want the voices together refused once, naming the bytes and the size that would hold them", refusals)
	}
}

// Held names the primed voices whose keys the engine's cache lists, and
// whether the cast spoken together is among them; another engine's keys
// name nothing.
func TestPrimerHeld(t *testing.T) {
	e := newPrimingEngine(0)
	p := New(Config{Engine: func() (api.Engine, error) { return e, nil }})
	p.Cast(voiceOf("Bea", "b"), voiceOf("Ada", "a"))
	p.Wait()
	if got := e.Held(); !slices.Equal(got, []string{"a", "b", "b+a"}) {
		t.Fatalf("the cache holds %q, want each voice and the two together", got)
	}
	for _, c := range []struct {
		keys []string
		refs []string
		cast bool
	}{
		{e.Held(), []string{"a", "b", "b+a"}, true},
		{[]string{"a", "b"}, []string{"a", "b"}, false}, // the voices together evicted
		{[]string{"b+a", "z"}, []string{"b+a"}, true},   // "z": a voice no prime made
		{nil, nil, false},
	} {
		refs, cast := p.Held(e, c.keys)
		var got []string
		for r := range refs {
			got = append(got, r)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.refs) || cast != c.cast {
			t.Errorf("held keys %q: %q, cast %v; want %q, %v", c.keys, got, cast, c.refs, c.cast)
		}
	}
	if refs, cast := p.Held(newPrimingEngine(0), e.Held()); len(refs) != 0 || cast {
		t.Errorf("another engine's keys: %v, %v; want nothing held", refs, cast)
	}
}

// A voice not primed (the cast's voices together with no room beside each
// alone, a voice the cache did not keep) has its key asked for, so that
// Held names it once a take in it leaves it in the cache; such a cast is
// still not restored. (Broken, the whole script's take starts from the
// cache and the studio says it is not ready.)
func TestPrimerHeldUnprimed(t *testing.T) {
	small := newPrimingEngine(30) // each voice alone fits, not the two together beside them
	small.CapBytes = 25           // Cy's state (26 bytes) is not kept
	p := New(Config{Engine: func() (api.Engine, error) { return small, nil }})
	p.Cast(voiceOf("Ada", "a"), voiceOf("Bea", "b"))
	p.Wait()
	p.Prime(voiceOfFrames("Cy", "c", 6))
	p.Wait()
	if got, want := small.Asked(), []string{"a", "b", "c (not kept)"}; !slices.Equal(got, want) {
		t.Fatalf("primed %q, want %q", got, want)
	}
	if n := small.KeyAsks(); n != 2 {
		t.Fatalf("asked %d keys, want 2: the voices together and Cy", n)
	}
	if refs, cast := p.Held(small, small.Held()); len(refs) != 2 || cast {
		t.Fatalf("before any take: %v, cast %v; want Ada and Bea alone", refs, cast)
	}
	small.Hold("a+b") // the whole script's take
	small.Hold("c")   // a take in Cy, with room for it then
	refs, cast := p.Held(small, small.Held())
	if !cast || !refs["a+b"] || !refs["c"] || len(refs) != 4 {
		t.Fatalf("after the takes: %v, cast %v; want the voices together and Cy held too", refs, cast)
	}
	small.Drop("a")
	if p.Restore(small, small.Held()) {
		t.Error("restored a cast whose voices together were never primed")
	}
}

// A cast voice the cache dropped is primed again: after the voices held
// (each marked recently used), and only for a cast that fit the cache whole
// on that engine; TakeEnded does it RestoreAfter after the last take, not
// while a take runs. (Broken, the cast stays dropped: its takes start by
// reading their references.)
func TestPrimerRestore(t *testing.T) {
	e := newPrimingEngine(0)
	var busy atomic.Bool
	p := New(Config{Engine: func() (api.Engine, error) { return e, nil }, Busy: busy.Load, RestoreAfter: 20 * time.Millisecond})
	defer p.Stop()
	p.Cast(voiceOf("Bea", "b"), voiceOf("Ada", "a"))
	p.Wait()
	if p.Restore(e, e.Held()) {
		t.Fatal("restored a cast the cache holds whole")
	}
	e.Drop("b")
	if p.Restore(newPrimingEngine(0), nil) {
		t.Fatal("restored the cast on an engine it was not primed on")
	}
	if !p.Restore(e, e.Held()) {
		t.Fatal("did not restore a cast voice the cache dropped")
	}
	p.Wait()
	if got, want := e.Asked()[3:], []string{"a (held)", "b+a (held)", "b"}; !slices.Equal(got, want) {
		t.Fatalf("restoring primed %q, want %q: the voices held first, then the one dropped", got, want)
	}

	// TakeEnded: not while a take runs; then RestoreAfter after it ends.
	e.Drop("b+a")
	busy.Store(true)
	p.TakeEnded()
	time.Sleep(60 * time.Millisecond)
	p.Wait()
	if n := len(e.Asked()); n != 6 {
		t.Fatalf("asked %q while a take ran", e.Asked()[6:])
	}
	busy.Store(false)
	p.TakeEnded()
	for deadline := time.Now().Add(5 * time.Second); len(e.Held()) < 3 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	p.Wait()
	if got, want := e.Asked()[6:], []string{"b (held)", "a (held)", "b+a"}; !slices.Equal(got, want) {
		t.Fatalf("after the take: primed %q, want %q", got, want)
	}

	// A cast whose voices together did not fit: each voice alone fits, but
	// restoring one would drop another, so none is restored.
	small := newPrimingEngine(30)
	q := New(Config{Engine: func() (api.Engine, error) { return small, nil }})
	q.Cast(voiceOf("Ada", "a"), voiceOf("Bea", "b"))
	q.Wait()
	small.Drop("a")
	if q.Restore(small, small.Held()) {
		t.Error("restored a cast that does not fit the cache whole")
	}
	p.Stop()
	p.TakeEnded()
	e.Drop("a")
	time.Sleep(60 * time.Millisecond)
	if n := len(e.Asked()); n != 9 {
		t.Errorf("asked %q after Stop", e.Asked()[9:])
	}
}

// The voices together are bounded by what voices of different lengths say
// of a state (a fixed part and bytes a row), not by the sum of theirs: a
// cache that holds them and that bound primes them, one that holds only
// them with their sum would not have. (Broken, the sum: nothing primed.)
func TestPrimerCastTogetherBound(t *testing.T) {
	for _, c := range []struct {
		cap  int64
		want []string
	}{
		// Fixed 100 B, 1 B a row: Ada 121 B (21 rows), Bea 131 B (31 rows);
		// together at most 100 + 52 = 152 B (the fake's own: 100 + 32).
		{cap: 403, want: []string{"a", "b"}},
		{cap: 404, want: []string{"a", "b", "a+b"}},
	} {
		e := &primingEngine{VoiceCache: enginetest.VoiceCache{FixedBytes: 100, RowBytes: 1}, cap: c.cap}
		p := New(Config{Engine: func() (api.Engine, error) { return e, nil }})
		p.Cast(voiceOfFrames("Ada", "a", 1), voiceOfFrames("Bea", "b", 11))
		p.Wait()
		if got := e.Asked(); !slices.Equal(got, c.want) {
			t.Errorf("cache of %d B: primed %q, want %q", c.cap, got, c.want)
		}
	}
	if got := togetherBytes([]state{{rows: 21, bytes: 121}, {rows: 21, bytes: 121}}); got != 242 {
		t.Errorf("two voices of the same rows: bound %d, want their sum 242", got)
	}
	if got := togetherBytes([]state{{rows: 10, bytes: 50}, {rows: 30, bytes: 40}}); got != 90 {
		t.Errorf("a longer voice with a smaller state (no such shape): bound %d, want their sum 90", got)
	}
}

// Prime calls from many goroutines while the primer drains its queue:
// every voice is primed once (the race detector watches the handover
// between a draining goroutine and a new Prime).
func TestPrimerConcurrentPrime(t *testing.T) {
	e := newPrimingEngine(0)
	p := New(Config{Engine: func() (api.Engine, error) { return e, nil }})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 20 {
				p.Prime(voiceOf("v", fmt.Sprint(g*20+i)))
			}
		}()
	}
	wg.Wait()
	p.Wait()
	got := e.Asked()
	slices.Sort(got)
	if len(got) != 160 || len(slices.Compact(got)) != 160 {
		t.Fatalf("primed %d voices (%d distinct), want 160 once each", len(got), len(slices.Compact(slices.Clone(got))))
	}
}

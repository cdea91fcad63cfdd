package take

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// Primes on the scheduler over fake frames: a prime never holds a take
// back, waits while takes are live, and is not counted in the load.

// primeFrames is seedFrames that takes reference prompts and shares a voice
// cache: a prompt's voice prefix is kept as an empty snapshot.
type primeFrames struct {
	seedFrames
	cache *drama3.PrefixCache
	last  drama3.PrefixOutcome
	snap  sizedSnapshot // what a voice's snapshot holds (0: 1 byte)
	short bool          // memory is short: no snapshot is made
}

func (f *primeFrames) BeginPrompt(ctx context.Context, p drama3.Prompt, s sampling.Settings, seed uint64) error {
	key, _ := f.PrefixKeyOf(p)
	_, held := f.cache.Holds(key)
	f.last = drama3.PrefixOutcome{Rows: p.VoicePrefix(), Restored: held, Prefilled: len(p)}
	if !held && !f.short {
		f.cache.Put(key, max(f.snap, 1))
	}
	return f.Begin(ctx, p.Tokens(), s, seed)
}
func (f *primeFrames) PrefixKeyOf(p drama3.Prompt) (drama3.PrefixKey, bool) {
	return p.PrefixKey(p.VoicePrefix(), ""), p.VoicePrefix() > 0
}

// sizedSnapshot is a snapshot of that many bytes, holding nothing.
type sizedSnapshot int64

func (s sizedSnapshot) Bytes() int64                    { return int64(s) }
func (sizedSnapshot) Release()                          {}
func (f *primeFrames) PrefixCache() *drama3.PrefixCache { return f.cache }
func (f *primeFrames) LastPrefix() drama3.PrefixOutcome { return f.last }

// beginLog is an Interleave that logs each BeginMany (per take, whether its
// prompt has reference rows: a prime here) and counts the frames the primes
// were asked to make.
type beginLog struct {
	*drama3.Interleave
	mu          sync.Mutex
	calls       [][]string
	primes      map[drama3.TakeID]bool
	primeFrames int
	onBegin     func() // if set, called at each BeginMany
}

func (s *beginLog) Step(frames []drama3.TakeFrame) error {
	s.mu.Lock()
	for _, f := range frames {
		if s.primes[f.ID] {
			s.primeFrames++
		}
	}
	s.mu.Unlock()
	return s.Interleave.Step(frames)
}

func (s *beginLog) BeginMany(starts []drama3.TakeStart) []error {
	var call []string
	for _, st := range starts {
		if st.Prompt.AudioRows() > 0 {
			call = append(call, "prime")
			s.mu.Lock()
			s.primes[st.ID] = true
			s.mu.Unlock()
		} else {
			call = append(call, "take")
		}
	}
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	if s.onBegin != nil {
		s.onBegin()
	}
	return drama3.BeginEach(s, starts)
}

func (s *beginLog) log() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// primeEngine is the engine over a logged set of places primeFrames
// sharing one voice cache.
func primeEngine(t *testing.T, places int) (*Engine, *beginLog) {
	t.Helper()
	cache := drama3.NewPrefixCache(1 << 20)
	inner, err := drama3.NewInterleave(&primeFrames{cache: cache},
		func() (drama3.FrameBackend, error) { return &primeFrames{cache: cache}, nil }, places)
	if err != nil {
		t.Fatal(err)
	}
	set := &beginLog{Interleave: inner, primes: map[drama3.TakeID]bool{}}
	e := fakeEngineOn(t, set)
	t.Cleanup(func() { e.Close() }) // after holdLive's releases: Close waits for held takes
	return e, set
}

// holdLive starts a take of seed that holds its first frame's events until
// release is called, so that it stays live (sitting out the steps); it
// returns once the take is live. wait waits for its end. The test's end
// releases it too, before primeEngine's Close (which waits for it).
func holdLive(t *testing.T, e *Engine, seed uint64) (release, wait func()) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	t.Cleanup(release)
	live, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var first sync.Once
		if _, err := e.Synthesize(context.Background(), fakeRequest(seed), func(ev api.Event) {
			if ev.Kind == api.EventFrames {
				first.Do(func() { close(live); <-ch })
			}
		}); err != nil {
			t.Error(err)
		}
	}()
	<-live
	return release, func() { <-done }
}

// A prime sent while a take is live waits; a take sent after it begins
// first (a free place is a take's); the prime begins once no take is live,
// ends at its begin, and never counts as waiting. (A scheduler that
// admitted jobs in arrival order would begin the prime beside the live take,
// before the second take.)
func TestPrimeWaitsForTheTakes(t *testing.T) {
	e, set := primeEngine(t, 2)
	releaseA, waitA := holdLive(t, e, 1)

	codes := [][]int{{1, 2}, {3, 0}, {5, 1}}
	var primed *api.Primed
	var primeErr error
	primeDone := make(chan struct{})
	go func() {
		defer close(primeDone)
		primed, primeErr = e.PrimeVoice(context.Background(), []api.Reference{{Transcript: "A voice.", Codes: codes}})
	}()
	time.Sleep(50 * time.Millisecond) // the prime waits behind A however long this is
	if got := set.log(); len(got) != 1 {
		t.Fatalf("begins %v while take A is live: the prime must wait", got)
	}
	if running, waiting := e.Load(); running != 1 || waiting != 0 {
		t.Errorf("load with a prime waiting: %d running, %d waiting; want 1 and 0", running, waiting)
	}

	// Take B, sent after the prime, takes the free place first.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := e.Synthesize(context.Background(), fakeRequest(2), nil); err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, func() bool { return len(set.log()) == 2 }, "take B's begin")
	if got := set.log()[1]; !slices.Equal(got, []string{"take"}) {
		t.Fatalf("the second begin was %v, want take B alone", got)
	}
	releaseA()
	waitA()
	wg.Wait()
	<-primeDone
	if primeErr != nil {
		t.Fatal(primeErr)
	}
	got := set.log()
	if len(got) != 3 || !slices.Equal(got[2], []string{"prime"}) {
		t.Fatalf("begins %v, want A, B, then the prime", got)
	}
	if primed.PrefixRows <= len(codes) || primed.Cached {
		t.Errorf("primed %+v: want the voice's rows (more than its %d frames), not cached", primed, len(codes))
	}
	if set.primeFrames != 0 {
		t.Errorf("the prime was stepped for %d frames; it ends at its begin", set.primeFrames)
	}
	if running, waiting := e.Load(); running != 0 || waiting != 0 {
		t.Errorf("load after the prime: %d running, %d waiting", running, waiting)
	}
}

// A prime and a take that arrive together at an idle engine do not begin
// together: the take begins alone (a prime in its begin would lengthen it),
// the prime after the take. (Broken once: both were begun in one BeginMany.)
func TestPrimeDoesNotJoinATakesBegin(t *testing.T) {
	e, set := primeEngine(t, 2)
	gather := func(d time.Duration) {
		e.sched.mu.Lock()
		e.sched.gather = d
		e.sched.mu.Unlock()
	}
	gather(time.Minute)                          // the two are gathered: the scheduler waits until both are there,
	set.onBegin = func() { gather(gatherGrace) } // then not for the prime left alone
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if _, err := e.PrimeVoice(context.Background(), []api.Reference{{Transcript: "A voice.", Codes: [][]int{{1, 2}, {3, 0}}}}); err != nil {
			t.Error(err)
		}
	}()
	go func() {
		defer wg.Done()
		if _, err := e.Synthesize(context.Background(), fakeRequest(3), nil); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	if got := set.log(); len(got) != 2 || !slices.Equal(got[0], []string{"take"}) || !slices.Equal(got[1], []string{"prime"}) {
		t.Fatalf("begins %v, want the take alone, then the prime", got)
	}
}

// A prime of a voice the cache holds by its turn (primed before, or cached
// by a take in it meanwhile) begins nothing and says the voice was cached.
// (Broken once: it began a take restoring the voice, and a take sent then
// waited for that begin.)
func TestPrimeOfAHeldVoiceBeginsNothing(t *testing.T) {
	e, set := primeEngine(t, 1)
	refs := []api.Reference{{Transcript: "A voice.", Codes: [][]int{{1, 2}, {3, 0}}}}
	first, err := e.PrimeVoice(context.Background(), refs)
	if err != nil || first.Cached || first.Bytes != 1 {
		t.Fatalf("first prime: %+v, %v; want the voice prefilled, its snapshot's 1 byte held", first, err)
	}
	again, err := e.PrimeVoice(context.Background(), refs)
	if err != nil || !again.Cached || again.PrefixRows != first.PrefixRows || again.Bytes != 1 {
		t.Fatalf("second prime: %+v, %v; want the voice found cached (%d rows, 1 byte)", again, err, first.PrefixRows)
	}
	if got := set.log(); len(got) != 1 {
		t.Fatalf("begins %v: the second prime must begin nothing", got)
	}
}

// A prime's key names its voice in the engine's stats while the cache holds
// it, the most recently used first: what the studio shows as the voices
// ready. A prime of a held voice gives the same key; an evicted voice's key
// leaves the list.
func TestPrimedKeysNameTheHeldVoices(t *testing.T) {
	e, set := primeEngine(t, 1)
	voice := func(c int) []api.Reference {
		return []api.Reference{{Transcript: "A voice.", Codes: [][]int{{c, 2}, {3, 0}}}}
	}
	prime := func(c int) string {
		t.Helper()
		p, err := e.PrimeVoice(context.Background(), voice(c))
		if err != nil || len(p.Key) != 64 {
			t.Fatalf("prime of voice %d: %+v, %v; want a 64-digit key", c, p, err)
		}
		return p.Key
	}
	a, b := prime(1), prime(4)
	if a == b {
		t.Fatalf("two voices primed under one key %s", a)
	}
	if got := e.Stats().Memory.VoiceKeys; !slices.Equal(got, []string{b, a}) {
		t.Fatalf("voice keys %v, want [%s %s]: the last primed first", got, b, a)
	}
	if again := prime(1); again != a {
		t.Fatalf("voice 1 primed again under %s, first under %s", again, a)
	}
	if got := e.Stats().Memory.VoiceKeys; !slices.Equal(got, []string{a, b}) {
		t.Fatalf("voice keys %v after voice 1 was asked for again, want [%s %s]", got, a, b)
	}
	set.Interleave.PrefixCache().Evict() // the least recently used: voice 4
	if got := e.Stats().Memory.VoiceKeys; !slices.Equal(got, []string{a}) {
		t.Fatalf("voice keys %v after an eviction, want [%s]", got, a)
	}
}

// A voice's key, asked for without priming, begins nothing and is the key
// a take in the voice then caches it under (whatever the take's text) and
// a prime of it gives: the studio asks it of a voice the cache had no room
// to prime, to tell when a take left it there. Refusals as a prime's.
func TestVoiceKeyWithoutPriming(t *testing.T) {
	e, set := primeEngine(t, 1)
	refs := []api.Reference{{Transcript: "A voice.", Codes: [][]int{{1, 2}, {3, 0}}}}
	key, err := e.VoiceKey(refs)
	if err != nil || len(key) != 64 {
		t.Fatalf("voice key: %q, %v; want a 64-digit key", key, err)
	}
	if other, _ := e.VoiceKey([]api.Reference{{Transcript: "A voice.", Codes: [][]int{{1, 2}, {3, 1}}}}); other == key {
		t.Fatalf("two voices under one key %s", key)
	}
	if got, keys := set.log(), e.Stats().Memory.VoiceKeys; len(got) != 0 || len(keys) != 0 {
		t.Fatalf("asking for a key began %v and left the cache holding %v; want nothing", got, keys)
	}
	req := fakeRequest(2)
	req.Text, req.References = "Some other words than a prime's.", refs
	if _, err := e.Synthesize(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	if keys := e.Stats().Memory.VoiceKeys; !slices.Equal(keys, []string{key}) {
		t.Fatalf("after a take in the voice the cache holds %v, want [%s]", keys, key)
	}
	if p, err := e.PrimeVoice(context.Background(), refs); err != nil || !p.Cached || p.Key != key {
		t.Fatalf("a prime of the voice: %+v, %v; want it found cached under %s", p, err, key)
	}

	plain := fakeEngine(t, 1)
	defer plain.Close()
	if _, err := plain.VoiceKey(refs); !errors.Is(err, api.ErrNoVoiceCache) {
		t.Errorf("a set without a voice cache: %v, want ErrNoVoiceCache", err)
	}
	for name, refs := range map[string][]api.Reference{
		"no references":       nil,
		"a code out of range": {{Transcript: "A voice.", Codes: [][]int{{8, 0}}}},
		"no frames":           {{Transcript: "A voice."}},
	} {
		if _, err := e.VoiceKey(refs); !errors.Is(err, api.ErrInvalidRequest) {
			t.Errorf("%s: %v, want an invalid request", name, err)
		}
	}
}

// A prime on a set without a voice cache fails as such; a prime without
// references, or with codes outside the codebooks, is the caller's mistake;
// a prime whose context ends while it waits ends with it.
func TestPrimeRefusals(t *testing.T) {
	plain := fakeEngine(t, 1)
	defer plain.Close()
	refs := []api.Reference{{Transcript: "A voice.", Codes: [][]int{{1, 2}}}}
	if _, err := plain.PrimeVoice(context.Background(), refs); !errors.Is(err, api.ErrNoVoiceCache) {
		t.Errorf("a set without a voice cache: %v, want ErrNoVoiceCache", err)
	}

	e, _ := primeEngine(t, 1)
	for name, refs := range map[string][]api.Reference{
		"no references":       nil,
		"a code out of range": {{Transcript: "A voice.", Codes: [][]int{{8, 0}}}},
		"no frames":           {{Transcript: "A voice."}},
	} {
		if _, err := e.PrimeVoice(context.Background(), refs); !errors.Is(err, api.ErrInvalidRequest) {
			t.Errorf("%s: %v, want an invalid request", name, err)
		}
	}

	// A voice whose state the cache does not keep is not primed, and the
	// error says why: larger than the cache, or memory short for it.
	for _, c := range []struct {
		f    primeFrames
		says string
	}{
		{primeFrames{snap: 3 << 20}, "it takes 3.0 MiB, more than the voice cache's 1.0 MiB"},
		{primeFrames{short: true}, "memory was short for it"},
	} {
		c.f.cache = drama3.NewPrefixCache(1 << 20)
		one, err := drama3.NewInterleave(&c.f, nil, 1)
		if err != nil {
			t.Fatal(err)
		}
		e := fakeEngineOn(t, one)
		_, err = e.PrimeVoice(context.Background(), refs)
		if !errors.Is(err, api.ErrVoiceNotKept) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("a voice not kept: %v, want ErrVoiceNotKept saying %q", err, c.says)
		}
		e.Close()
	}

	// A live take holds the one place; the prime's context ends meanwhile.
	release, wait := holdLive(t, e, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(10 * time.Millisecond); cancel() }()
	if _, err := e.PrimeVoice(ctx, refs); !errors.Is(err, context.Canceled) {
		t.Errorf("a prime stopped while waiting: %v, want context.Canceled", err)
	}
	release()
	wait()
}

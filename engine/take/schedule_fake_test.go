package take

import (
	"context"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
	"proscenium/engine/internal/testutil"
	"proscenium/engine/sampling"
	"proscenium/engine/tokenizer"
)

// The scheduler over fake frames, fast enough for the race detector: many
// takes at once, stops, a failing take and Close while takes run.

// seedFrames makes a take's frames from its seed alone: frame f's codes are
// codesOf(seed, f); it ends after endOf(seed) frames. Seed 13 fails at
// frame 2 (a backend error of that take alone).
type seedFrames struct {
	seed  uint64
	frame int
}

const (
	failingSeed      = 13
	failingBeginSeed = 17 // fails at Begin (a bad voice, say)
)

func endOf(seed uint64) int { return 4 + int(seed%5) + int(seed/1000)*1000 } // seeds ≥ 1000 run long

func codesOf(seed uint64, f int) []int {
	return []int{int(seed*7+uint64(f)) % 8, int(seed+uint64(f)) % 4}
}

func (s *seedFrames) CodebookEntries() []int { return []int{8, 4} }
func (s *seedFrames) SamplesPerFrame() int   { return 4 }
func (s *seedFrames) Begin(ctx context.Context, _ []int, _ sampling.Settings, seed uint64) error {
	s.seed, s.frame = seed, 0
	if seed == failingBeginSeed {
		return errors.New("injected begin fault")
	}
	return ctx.Err()
}
func (s *seedFrames) Frame(codes, _ []int) (bool, error) {
	if s.seed == failingSeed && s.frame == 2 {
		return false, errors.New("injected frame fault")
	}
	if s.frame == endOf(s.seed) {
		return true, nil
	}
	copy(codes, codesOf(s.seed, s.frame))
	s.frame++
	return false, nil
}
func (s *seedFrames) Decode(from, to int) ([]float32, error) {
	return make([]float32, 4*(to-from)), nil
}
func (s *seedFrames) Close() error { return nil }

func fakeEngine(t *testing.T, batch int) *Engine {
	t.Helper()
	set, err := drama3.NewInterleave(&seedFrames{}, func() (drama3.FrameBackend, error) { return &seedFrames{}, nil }, batch)
	if err != nil {
		t.Fatal(err)
	}
	return fakeEngineOn(t, set)
}

// tinyTokenizer is the tiny checkpoint's tokenizer, made once for the
// package's tests (a tokenizer is read only: the engines share it).
var tinyTokenizer struct {
	once sync.Once
	tok  *tokenizer.Tokenizer
	err  error
}

// fakeEngineOn is the engine over set with the tiny checkpoint's tokenizer.
func fakeEngineOn(t *testing.T, set drama3.TakeSet) *Engine {
	t.Helper()
	base := testutil.ReadFoundFile(t, drama3.FindBaseTokenizer)
	tinyTokenizer.once.Do(func() {
		dir, err := os.MkdirTemp("", "proscenium-take-")
		if err != nil {
			tinyTokenizer.err = err
			return
		}
		defer os.RemoveAll(dir)
		if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base}); err != nil {
			tinyTokenizer.err = err
			return
		}
		tinyTokenizer.tok, tinyTokenizer.err = drama3.LoadTokenizer(dir)
	})
	tok, err := tinyTokenizer.tok, tinyTokenizer.err
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{Info: api.Info{SampleRate: 16, SamplesPerFrame: 4}, Takes: set, Tokenizer: tok,
		Memory: func() api.Memory { return api.Memory{} }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func fakeRequest(seed uint64) api.SpeechRequest {
	return api.SpeechRequest{Text: "Fake.", Sampling: api.DefaultSampling(), Seed: seed, MaxFrames: 5000}
}

// Eleven takes on three places: each makes its seed's codes, a stopped one
// stops at its frame, the failing one fails alone.
func TestSchedulerFakeTakes(t *testing.T) {
	e := fakeEngine(t, 3)
	defer e.Close()
	type result struct {
		fin *api.Finish
		err error
	}
	seeds := []uint64{1, 2, 3, 4, 5, failingSeed, 6, 7, 8, 9, 1001}
	results := make([]result, len(seeds))
	var wg sync.WaitGroup
	for i, seed := range seeds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fin, err := e.Synthesize(ctx, fakeRequest(seed), func(ev api.Event) {
				if seed == 1001 && ev.Kind == api.EventFrames && ev.Frames == 3 {
					cancel()
				}
			})
			results[i] = result{fin, err}
		}()
	}
	wg.Wait()
	for i, seed := range seeds {
		r := results[i]
		switch seed {
		case failingSeed:
			if r.err == nil || r.err.Error() != "injected frame fault" {
				t.Errorf("seed %d: %v, want the injected fault", seed, r.err)
			}
			continue
		case 1001:
			if r.err != nil || r.fin.Reason != api.FinishCancel || r.fin.Frames != 3 {
				t.Errorf("stopped take: %+v, %v; want a cancel after 3 frames", r.fin, r.err)
			}
			continue
		}
		if r.err != nil {
			t.Fatalf("seed %d: %v", seed, r.err)
		}
		want := make([][]int, endOf(seed))
		for f := range want {
			want[f] = codesOf(seed, f)
		}
		if r.fin.Reason != api.FinishStop || !reflect.DeepEqual(r.fin.Codes, want) {
			t.Errorf("seed %d: %s with codes %v, want stop with %v", seed, r.fin.Reason, r.fin.Codes, want)
		}
		if r.fin.Batch < 1 || r.fin.Batch > 3 {
			t.Errorf("seed %d: batch %d of 3 places", seed, r.fin.Batch)
		}
	}
	if running, waiting := e.Load(); running != 0 || waiting != 0 {
		t.Errorf("load after every take ended: %d running, %d waiting", running, waiting)
	}
}

// Close stops the running takes and the waiting ones; each caller gets its
// finish (a cancel) before Close returns, and later takes are refused.
func TestSchedulerCloseStopsEveryTake(t *testing.T) {
	e := fakeEngine(t, 2)
	started := make(chan struct{}, 4)
	finished := make(chan *api.Finish, 4)
	var told atomic.Int32 // finish events emitted
	for i := range 4 {
		go func() {
			once := sync.Once{}
			fin, err := e.Synthesize(context.Background(), fakeRequest(2000+uint64(i)), func(ev api.Event) {
				switch ev.Kind {
				case api.EventFrames:
					// The caller holds its first frame's events until Close
					// begins: its take sits out the steps meanwhile, so it
					// cannot end on its own before Close stops it.
					once.Do(func() { started <- struct{}{}; <-e.closing.Done() })
					// Then it takes its events slowly, so that the take, whose
					// fake frames cost nothing, cannot run to its end (≈ 2000
					// frames) between Close beginning and Close stopping it
					// (seen in CI: a take ended "stop" after 2006 frames).
					time.Sleep(time.Millisecond)
				case api.EventFinished:
					told.Add(1)
				}
			})
			if err != nil {
				t.Error(err)
			}
			finished <- fin
		}()
	}
	<-started
	<-started // two run; two wait (once their callers have reached Synthesize)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if running, waiting := e.Load(); running == 2 && waiting == 2 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("%d running, %d waiting, want 2 and 2", running, waiting)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := told.Load(); n != 4 {
		t.Fatalf("Close returned with %d of 4 takes' callers told they finished", n)
	}
	for range 4 {
		if fin := <-finished; fin == nil || fin.Reason != api.FinishCancel {
			t.Errorf("a take ended %+v, want a cancel", fin)
		}
	}
	if _, err := e.Synthesize(context.Background(), fakeRequest(1), nil); err == nil {
		t.Error("a take after Close ran")
	}
}

// gatedSet is an Interleave that keeps each BeginMany's seeds and holds
// its first BeginMany until open is closed: the takes that arrive
// meanwhile wait together for the next step boundary.
type gatedSet struct {
	*drama3.Interleave
	open  chan struct{}
	mu    sync.Mutex
	calls [][]uint64
}

func (s *gatedSet) BeginMany(starts []drama3.TakeStart) []error {
	seeds := make([]uint64, len(starts))
	for i, st := range starts {
		seeds[i] = st.Seed
	}
	s.mu.Lock()
	first := len(s.calls) == 0
	s.calls = append(s.calls, seeds)
	s.mu.Unlock()
	if first {
		<-s.open
	}
	return drama3.BeginEach(s, starts)
}

func (s *gatedSet) beginCalls() [][]uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Takes that wait together are begun in one BeginMany (the joint prefill of
// a batched set); one of them whose Begin fails fails alone, and the others
// make their seeds' codes. (Broken once by admitting one job per
// iteration of the scheduler's loop: the second call then held one seed.)
func TestSchedulerBeginsWaitingTakesTogether(t *testing.T) {
	inner, err := drama3.NewInterleave(&seedFrames{}, func() (drama3.FrameBackend, error) { return &seedFrames{}, nil }, 4)
	if err != nil {
		t.Fatal(err)
	}
	set := &gatedSet{Interleave: inner, open: make(chan struct{})}
	e := fakeEngineOn(t, set)
	defer e.Close()
	seeds := []uint64{1, 2, failingBeginSeed, 3}
	errs := make([]error, len(seeds))
	fins := make([]*api.Finish, len(seeds))
	var wg sync.WaitGroup
	run := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fins[i], errs[i] = e.Synthesize(context.Background(), fakeRequest(seeds[i]), nil)
		}()
	}
	run(0) // begins alone, and holds the scheduler in its BeginMany
	waitFor(t, func() bool { return len(set.beginCalls()) == 1 }, "the first take's begin")
	for i := 1; i < len(seeds); i++ {
		run(i)
	}
	waitFor(t, func() bool { _, waiting := e.Load(); return waiting == len(seeds)-1 }, "three takes waiting")
	close(set.open)
	wg.Wait()
	calls := set.beginCalls()
	if len(calls) != 2 || len(calls[1]) != len(seeds)-1 {
		t.Fatalf("BeginMany calls %v, want the first take's, then the three that waited in one", calls)
	}
	for i, seed := range seeds {
		if seed == failingBeginSeed {
			if errs[i] == nil || !strings.Contains(errs[i].Error(), "injected begin fault") {
				t.Errorf("seed %d: %v, want the injected begin fault", seed, errs[i])
			}
			continue
		}
		if errs[i] != nil {
			t.Fatalf("seed %d: %v", seed, errs[i])
		}
		want := make([][]int, endOf(seed))
		for f := range want {
			want[f] = codesOf(seed, f)
		}
		if fins[i].Reason != api.FinishStop || !reflect.DeepEqual(fins[i].Codes, want) {
			t.Errorf("seed %d: %s with codes %v, want stop with %v", seed, fins[i].Reason, fins[i].Codes, want)
		}
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
	}
}

// An idle scheduler gathers the takes sent together: those arriving within
// the gather grace of the first are begun with it in one BeginMany. The set
// holds exactly three, so the gathering ends when the third arrives, not on
// a clock: the test does not depend on the machine's speed (CI once took
// over a second between two Synthesize calls under -race). (Broken once with
// no grace: the first take began alone, the next two together.)
func TestSchedulerGathersTakesSentTogether(t *testing.T) {
	inner, err := drama3.NewInterleave(&seedFrames{}, func() (drama3.FrameBackend, error) { return &seedFrames{}, nil }, 3)
	if err != nil {
		t.Fatal(err)
	}
	set := &gatedSet{Interleave: inner, open: make(chan struct{})}
	close(set.open)
	e := fakeEngineOn(t, set)
	defer e.Close()
	e.sched.mu.Lock()
	e.sched.gather = time.Hour // the set's capacity, not the clock, ends the gathering
	e.sched.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		if i > 0 {
			time.Sleep(50 * time.Millisecond) // well within the grace
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.Synthesize(context.Background(), fakeRequest(uint64(i+1)), nil)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if calls := set.beginCalls(); len(calls) != 1 || len(calls[0]) != 3 {
		t.Fatalf("BeginMany calls %v, want the three takes in one", calls)
	}
}

// boundSet is an interleaved fake set whose step costs per a take stepped
// (a bus each take's rows read over), but nothing for a take's first frame
// (made with its prefill, as cuda.TakeFrames does), with a real-time bound
// when bound > 0; it keeps the most takes any step made frames for.
type boundSet struct {
	*drama3.Interleave
	per   time.Duration
	bound float64
	most  atomic.Int32
	seen  map[drama3.TakeID]bool // takes stepped before (Step's goroutine alone)
}

func (s *boundSet) RealTimeBound() float64 { return s.bound }

func (s *boundSet) Step(frames []drama3.TakeFrame) error {
	if n := int32(len(frames)); n > s.most.Load() {
		s.most.Store(n)
	}
	var cost time.Duration
	for _, f := range frames {
		if s.seen[f.ID] {
			cost += s.per
		}
		s.seen[f.ID] = true
	}
	time.Sleep(cost)
	return s.Interleave.Step(frames)
}

// Under a real-time bound takes join only while each stays within it: with
// a step of 30 ms a take and a bound of 0.3 of the fake's 250 ms frame
// (75 ms), two takes step together (60 ms), a third would make each 90 ms,
// so four takes sent together run two at a time, each with its own codes.
// Without the bound the four run together. Broken once by admitting on
// the set's places alone, and once by measuring a take's first step (its
// frame made with the prefill, free): four stepped together each time.
func TestSchedulerRealTimeBound(t *testing.T) {
	for _, c := range []struct {
		bound float64
		most  int32 // the most takes stepped together
	}{{0.3, 2}, {0, 4}} {
		il, err := drama3.NewInterleave(&seedFrames{}, func() (drama3.FrameBackend, error) { return &seedFrames{}, nil }, 4)
		if err != nil {
			t.Fatal(err)
		}
		set := &boundSet{Interleave: il, per: 30 * time.Millisecond, bound: c.bound, seen: map[drama3.TakeID]bool{}}
		e := fakeEngineOn(t, set)
		seeds := []uint64{1, 2, 3, 4}
		fins := make([]*api.Finish, len(seeds))
		var wg sync.WaitGroup
		for i, seed := range seeds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fin, err := e.Synthesize(context.Background(), fakeRequest(seed), func(api.Event) {})
				if err != nil {
					t.Errorf("bound %g, seed %d: %v", c.bound, seed, err)
				}
				fins[i] = fin
			}()
		}
		wg.Wait()
		e.Close()
		if got := set.most.Load(); c.bound > 0 && got > c.most || c.bound == 0 && got != c.most {
			t.Errorf("bound %g: %d takes stepped together at most, want %d", c.bound, got, c.most)
		}
		for i, seed := range seeds {
			want := make([][]int, endOf(seed))
			for f := range want {
				want[f] = codesOf(seed, f)
			}
			if fin := fins[i]; fin == nil || !reflect.DeepEqual(fin.Codes, want) || c.bound > 0 && fin.Batch > int(c.most) {
				t.Errorf("bound %g, seed %d: %+v, want the codes %v in a batch of at most %d", c.bound, seed, fin, want, c.most)
			}
		}
	}
}

package gpuworker

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

// fakeEngine is a deterministic api.Engine for the process boundary: a
// take makes min(MaxFrames, len(Text)) frames whose codes and PCM follow
// from the seed and the references, one frame per delay. The same engine runs in the test
// process (the reference) and in the worker (the test binary, mode
// "engine"), so a take through the worker must equal the one made here.
type fakeEngine struct {
	model string
	delay time.Duration

	mu     sync.Mutex
	closed bool
	last   *api.Finish
	primed map[string]bool // the voices PrimeVoice has kept, by their transcripts and codes
}

func openFake(ctx context.Context, req LoadRequest, progress func(done, total int64)) (api.Engine, error) {
	if req.Backend != "fake" {
		return nil, fmt.Errorf("backend %q: this worker serves the fake backend", req.Backend)
	}
	if strings.Contains(req.Model, "missing") {
		return nil, fmt.Errorf("open %s: no such file or directory", req.Model)
	}
	for done := int64(0); done <= 300; done += 100 {
		progress(done, 300)
	}
	return &fakeEngine{model: req.Model, delay: 20 * time.Millisecond}, nil
}

func (e *fakeEngine) Info() api.Info {
	return api.Info{Model: e.model, Backend: "fake", SampleRate: 8, SamplesPerFrame: 2, Codebooks: 2, CodebookSizes: []int{5, 7}}
}

func (e *fakeEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	if req.MaxFrames < 1 {
		return nil, fmt.Errorf("%w: max_frames %d must be at least 1", api.ErrInvalidRequest, req.MaxFrames)
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, errors.New("engine is closed")
	}
	n := min(req.MaxFrames, len(req.Text))
	voice := uint64(0) // the references' part of the codes
	for _, r := range req.References {
		voice += uint64(len(r.Transcript))
		for _, fr := range r.Codes {
			for _, c := range fr {
				voice += uint64(c)
			}
		}
	}
	fin := &api.Finish{Reason: api.FinishStop, StagesS: map[string]float64{"frames": float64(n) / 1e3}}
	for f := 0; f < n; f++ {
		if ctx.Err() != nil {
			fin.Reason = api.FinishCancel
			break
		}
		if strings.HasPrefix(req.Text, "slow") {
			time.Sleep(e.delay)
		}
		fin.Codes = append(fin.Codes, []int{f % 5, int(req.Seed+voice+uint64(f)) % 7})
		fin.Frames = f + 1
		emit(api.Event{Kind: api.EventFrames, Frames: f + 1})
		pcm := []float32{float32(req.Seed) + float32(f)/3, -float32(f) / 7}
		emit(api.Event{Kind: api.EventAudio, Audio: &api.AudioChunk{FromFrame: f, ToFrame: f + 1, PCM: pcm}})
	}
	if fin.Reason == api.FinishStop && n == req.MaxFrames {
		fin.Reason = api.FinishLength
	}
	fin.AudioS = float64(fin.Frames*2) / 8
	fin.ElapsedS = float64(fin.Frames) * 0.001234567
	fin.RealTimeFactor = 1 / 3.0
	emit(api.Event{Kind: api.EventFinished, Finished: fin})
	e.mu.Lock()
	e.last = fin
	e.mu.Unlock()
	return fin, nil
}

// CountTokens counts one token per byte.
func (e *fakeEngine) CountTokens(text string) (int, error) {
	if strings.Contains(text, "\x00") {
		return 0, errors.New("text holds a NUL byte")
	}
	return len(text), nil
}

// CheckText refuses the made-up token <|x|>.
func (e *fakeEngine) CheckText(text string) error {
	if i := strings.Index(text, "<|x|>"); i >= 0 {
		return &drama3.TextError{Offset: i, Token: "<|x|>", Reason: "not in this model"}
	}
	if strings.Contains(text, "\x00") {
		return errors.New("text holds a NUL byte")
	}
	return nil
}

// EncodeReference makes one frame of two codes per two samples, from the
// samples' bits, so that a sample changed on the way changes the codes.
func (e *fakeEngine) EncodeReference(samples []float32) ([]int32, int, error) {
	if len(samples) < 2 {
		return nil, 0, errors.New("too short to encode")
	}
	codes := make([]int32, len(samples)/2*2)
	for i := range codes {
		codes[i] = int32(math.Float32bits(samples[i]) % 1000)
	}
	return codes, len(codes) / 2, nil
}

// PrimeVoice keeps the voice: its rows are its frames and transcripts'
// bytes, its state 1000 bytes a row; a voice primed before is found cached. A transcript "slow" makes
// the prime wait until ctx ends.
func (e *fakeEngine) PrimeVoice(ctx context.Context, refs []api.Reference) (*api.Primed, error) {
	if len(refs) == 0 {
		return nil, fmt.Errorf("%w: no references", api.ErrInvalidRequest)
	}
	if refs[0].Transcript == "slow" {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	key := fmt.Sprint(refs)
	rows := 0
	for _, r := range refs {
		rows += len(r.Codes) + len(r.Transcript)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.primed == nil {
		e.primed = map[string]bool{}
	}
	p := &api.Primed{PrefixRows: rows, Cached: e.primed[key], Bytes: 1000 * int64(rows), PrefillMs: 1.5, Key: key}
	e.primed[key] = true
	return p, nil
}

// VoiceKey is PrimeVoice's key for refs, the voice not kept.
func (e *fakeEngine) VoiceKey(refs []api.Reference) (string, error) {
	if len(refs) == 0 {
		return "", fmt.Errorf("%w: no references", api.ErrInvalidRequest)
	}
	return fmt.Sprint(refs), nil
}

func (e *fakeEngine) Stats() api.Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	return api.Stats{Memory: api.Memory{Device: "fake", Used: 1000, Peak: 2000}, LastTake: e.last}
}

func (e *fakeEngine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	return nil
}

// record runs a take and keeps what it emitted.
type record struct {
	events []api.Event
	fin    *api.Finish
	err    error
}

func runRecorded(ctx context.Context, eng api.Engine, req api.SpeechRequest, during func(api.Event)) record {
	var r record
	r.fin, r.err = eng.Synthesize(ctx, req, func(ev api.Event) {
		r.events = append(r.events, ev)
		if during != nil {
			during(ev)
		}
	})
	return r
}

// fakePair is the fake engine in a worker (closed when the test ends) and
// the same engine in this process, the reference.
func fakePair(t *testing.T) (worker, local api.Engine) {
	t.Helper()
	req := LoadRequest{Model: "/models/fake", Backend: "fake"}
	eng, err := OpenEngine(context.Background(), fakeSupervisor(t), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	local, _ = openFake(context.Background(), req, func(int64, int64) {})
	return eng, local
}

func fakeSupervisor(t *testing.T) *Supervisor {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &Supervisor{Path: exe, Opt: Options{Env: []string{"GPUWORKER_FAKE=engine"}}}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestEngineThroughTheWorkerEqualsTheEngineInProcess(t *testing.T) {
	ctx := context.Background()
	sup := fakeSupervisor(t)
	var progress []string
	eng, err := OpenEngine(ctx, sup, LoadRequest{Model: "/models/fake", Backend: "fake"}, func(done, total int64) {
		progress = append(progress, fmt.Sprint(done, "/", total))
	})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if len(progress) == 0 || progress[len(progress)-1] != "300/300" {
		t.Errorf("load progress %v, want it to end at 300/300", progress)
	}
	local, _ := openFake(ctx, LoadRequest{Model: "/models/fake", Backend: "fake"}, func(int64, int64) {})
	if !reflect.DeepEqual(eng.Info(), local.Info()) {
		t.Fatalf("info %+v, want %+v", eng.Info(), local.Info())
	}
	for _, req := range []api.SpeechRequest{
		{Text: "hello", Seed: 3, MaxFrames: 100},
		{Text: "a longer text", Seed: 9, MaxFrames: 4},
	} {
		want := runRecorded(ctx, local, req, nil)
		got := runRecorded(ctx, eng, req, nil)
		if got.err != nil || !reflect.DeepEqual(got.fin, want.fin) {
			t.Fatalf("%+v: finish %+v, %v; want %+v", req, got.fin, got.err, want.fin)
		}
		if len(got.fin.Codes) != got.fin.Frames {
			t.Fatalf("%d frames of codes for %d frames", len(got.fin.Codes), got.fin.Frames)
		}
		if !reflect.DeepEqual(got.events, want.events) {
			t.Fatalf("%+v: events\n%+v\nwant\n%+v", req, got.events, want.events)
		}
	}
	st := eng.Stats()
	if st.Memory.Device != "fake" || st.Memory.Used != 1000 || st.LastTake == nil || st.LastTake.Frames != 4 || len(st.LastTake.Codes) != 4 {
		t.Fatalf("stats %+v", st)
	}

	// The engine's errors cross the boundary as they are.
	bad := api.SpeechRequest{Text: "x", MaxFrames: 0}
	_, werr := local.Synthesize(ctx, bad, nil)
	_, err = eng.Synthesize(ctx, bad, nil)
	if !errors.Is(err, api.ErrInvalidRequest) || err.Error() != werr.Error() {
		t.Fatalf("invalid request: %v, want %v", err, werr)
	}
	if _, err := OpenEngine(ctx, sup, LoadRequest{Model: "/models/missing", Backend: "fake"}, nil); err == nil || !strings.Contains(err.Error(), "/models/missing: no such file") {
		t.Fatalf("load of a missing model: %v", err)
	}

	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Synthesize(ctx, api.SpeechRequest{Text: "x", MaxFrames: 1}, nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("take after Close: %v", err)
	}
}

// The token count and the script check run in the worker with its engine's
// tokenizer and rules; a refusal arrives as the *drama3.TextError it was.
func TestTextOpsThroughTheWorker(t *testing.T) {
	ctx := context.Background()
	eng, local := fakePair(t)
	for _, text := range []string{"", "Hello.", "ab<|x|>cd", "nul\x00byte"} {
		wn, werr := local.(api.TokenCounter).CountTokens(text)
		n, err := eng.(api.TokenCounter).CountTokens(text)
		if n != wn || (err == nil) != (werr == nil) || err != nil && !strings.Contains(err.Error(), werr.Error()) {
			t.Errorf("count %q: %d, %v; want %d, %v", text, n, err, wn, werr)
		}
		werr = local.(api.TextChecker).CheckText(text)
		err = eng.(api.TextChecker).CheckText(text)
		if (err == nil) != (werr == nil) || err != nil && !strings.Contains(err.Error(), werr.Error()) {
			t.Errorf("check %q: %v, want %v", text, err, werr)
		}
		var want, got *drama3.TextError
		if errors.As(werr, &want) && (!errors.As(err, &got) || *got != *want) {
			t.Errorf("check %q: %#v, want the text error %#v", text, err, want)
		}
	}
	// A dead worker is not restarted for a count: the next take does that.
	if p, err := os.FindProcess(PID(eng)); err != nil || p.Kill() != nil {
		t.Fatalf("killing worker %d", PID(eng))
	}
	<-eng.(*remoteEngine).c.Done()
	if _, err := eng.(api.TokenCounter).CountTokens("Hello."); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Fatalf("count with the worker dead: %v", err)
	}
	if fin, err := eng.Synthesize(ctx, api.SpeechRequest{Text: "hello", MaxFrames: 2}, nil); err != nil || fin.Frames != 2 {
		t.Fatalf("take after the worker died: %+v, %v", fin, err)
	}
	if n, err := eng.(api.TokenCounter).CountTokens("Hello."); n != 6 || err != nil {
		t.Fatalf("count in the fresh worker: %d, %v", n, err)
	}
}

// A take's references reach the engine in the worker: the fake engine's
// codes depend on them, and the worker's take equals the in-process one.
func TestReferencesReachTheEngineInTheWorker(t *testing.T) {
	ctx := context.Background()
	eng, local := fakePair(t)
	plain := api.SpeechRequest{Text: "a voice", Seed: 4, MaxFrames: 5}
	voiced := plain
	voiced.References = []api.Reference{{Transcript: "one", Codes: [][]int{{1, 2}, {3, 4}}}, {Transcript: "two", Codes: [][]int{{4, 6}}}}
	want := runRecorded(ctx, local, voiced, nil)
	got := runRecorded(ctx, eng, voiced, nil)
	if got.err != nil || !reflect.DeepEqual(got.fin, want.fin) {
		t.Fatalf("finish %+v, %v; want %+v", got.fin, got.err, want.fin)
	}
	if without := runRecorded(ctx, local, plain, nil); reflect.DeepEqual(without.fin.Codes, want.fin.Codes) {
		t.Fatal("the fake engine's codes do not depend on the references: the test cannot fail")
	}
}

// A prime crosses to the worker with its references whole and comes back
// with the engine's figures; so does a voice's key; a refusal keeps its
// kind; a prime stopped by its caller stops in the worker.
func TestPrimeThroughTheWorker(t *testing.T) {
	ctx := context.Background()
	eng, local := fakePair(t)
	refs := []api.Reference{{Transcript: "one", Codes: [][]int{{1, 2}, {3, 4}}}, {Transcript: "two", Codes: [][]int{{4, 6}}}}
	want, _ := local.(api.VoicePrimer).PrimeVoice(ctx, refs)
	got, err := eng.(api.VoicePrimer).PrimeVoice(ctx, refs)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("prime through the worker: %+v, %v; want %+v", got, err, want)
	}
	if again, err := eng.(api.VoicePrimer).PrimeVoice(ctx, refs); err != nil || !again.Cached {
		t.Fatalf("the same voice again: %+v, %v; want it cached in the worker", again, err)
	}
	if _, err := eng.(api.VoicePrimer).PrimeVoice(ctx, nil); !errors.Is(err, api.ErrInvalidRequest) {
		t.Fatalf("a prime without references: %v, want an invalid request", err)
	}
	other := []api.Reference{{Transcript: "three", Codes: [][]int{{7, 8}}}}
	wantKey, _ := local.(api.VoicePrimer).VoiceKey(other)
	if key, err := eng.(api.VoicePrimer).VoiceKey(refs); err != nil || key != got.Key {
		t.Fatalf("the primed voice's key through the worker: %q, %v; want the prime's %q", key, err, got.Key)
	}
	if key, err := eng.(api.VoicePrimer).VoiceKey(other); err != nil || key != wantKey || key == got.Key {
		t.Fatalf("another voice's key through the worker: %q, %v; want %q, not the first voice's", key, err, wantKey)
	}
	if _, err := eng.(api.VoicePrimer).VoiceKey(nil); !errors.Is(err, api.ErrInvalidRequest) {
		t.Fatalf("a voice key without references: %v, want an invalid request", err)
	}
	pid := PID(eng)
	stop, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := eng.(api.VoicePrimer).PrimeVoice(stop, []api.Reference{{Transcript: "slow", Codes: [][]int{{1, 1}}}}); err == nil {
		t.Fatal("a prime whose caller stopped it returned no error")
	}
	// The worker stopped it (one that had not would have been ended).
	if again, err := eng.(api.VoicePrimer).PrimeVoice(ctx, refs); err != nil || !again.Cached || PID(eng) != pid {
		t.Fatalf("after a stopped prime: %+v, %v, worker %d (was %d); want the same worker, the voice still cached", again, err, PID(eng), pid)
	}
}

// A reference recording crosses to the worker bit for bit and comes back
// as the engine's codes; the engine's refusal comes back as an error.
func TestEncodeThroughTheWorker(t *testing.T) {
	eng, local := fakePair(t)
	samples := make([]float32, 44101)
	for i := range samples {
		samples[i] = float32(math.Sin(float64(i)*0.37)) * float32(i%7) / 3
	}
	samples[5] = math.SmallestNonzeroFloat32
	wc, wf, _ := local.(api.ReferenceEncoder).EncodeReference(samples)
	codes, frames, err := eng.(api.ReferenceEncoder).EncodeReference(samples)
	if err != nil || frames != wf || !reflect.DeepEqual(codes, wc) {
		t.Fatalf("encode through the worker: %d frames, %v; want %d frames and the same codes", frames, err, wf)
	}
	if _, _, err := eng.(api.ReferenceEncoder).EncodeReference([]float32{1}); err == nil || !strings.Contains(err.Error(), "too short to encode") {
		t.Fatalf("a refused encode: %v", err)
	}
}

// A worker killed mid-take ends that take with an error naming it, after the
// audio it had sent; the next take runs in a fresh worker that loaded the
// model again, and equals the in-process take.
func TestKilledWorkerEndsTheTakeAndTheNextTakeReloads(t *testing.T) {
	ctx := context.Background()
	eng, err := OpenEngine(ctx, fakeSupervisor(t), LoadRequest{Model: "/models/fake", Backend: "fake"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	pid := PID(eng)
	if pid == 0 {
		t.Fatal("no worker pid")
	}
	req := api.SpeechRequest{Text: "slow " + strings.Repeat("x", 200), Seed: 1, MaxFrames: 200}
	killed := runRecorded(ctx, eng, req, func(ev api.Event) {
		if ev.Kind == api.EventAudio && ev.Audio.ToFrame == 2 {
			if p, err := os.FindProcess(pid); err != nil || p.Kill() != nil {
				t.Errorf("killing worker %d", pid)
			}
		}
	})
	var died *WorkerDiedError
	if !errors.As(killed.err, &died) || died.PID != pid || !strings.Contains(killed.err.Error(), "signal: killed") ||
		!strings.Contains(killed.err.Error(), fmt.Sprintf("pid %d", pid)) {
		t.Fatalf("take on a killed worker: %v", killed.err)
	}
	audio := 0
	for _, ev := range killed.events {
		if ev.Kind == api.EventAudio {
			audio++
		}
	}
	if audio < 2 {
		t.Fatalf("%d audio chunks delivered before the kill, want at least 2", audio)
	}
	if st := eng.Stats(); st.Memory.Used != 0 || !strings.Contains(st.Memory.Device, "not running") {
		t.Fatalf("stats with the worker dead: %+v", st)
	}

	next := api.SpeechRequest{Text: "after", Seed: 2, MaxFrames: 10}
	local, _ := openFake(ctx, LoadRequest{Model: "/models/fake", Backend: "fake"}, func(int64, int64) {})
	want := runRecorded(ctx, local, next, nil)
	got := runRecorded(ctx, eng, next, nil)
	if got.err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("take after the restart: %+v, want %+v", got, want)
	}
	if p := PID(eng); p == 0 || p == pid {
		t.Fatalf("worker pid %d after the restart (was %d)", p, pid)
	}
}

// Cancelling a take ends it with FinishCancel and its codes so far.
func TestCancelledTakeThroughTheWorker(t *testing.T) {
	eng, err := OpenEngine(context.Background(), fakeSupervisor(t), LoadRequest{Model: "m", Backend: "fake"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := runRecorded(ctx, eng, api.SpeechRequest{Text: "slow" + strings.Repeat("x", 100), MaxFrames: 100}, func(ev api.Event) {
		if ev.Kind == api.EventFrames && ev.Frames == 2 {
			cancel()
		}
	})
	if r.err != nil || r.fin.Reason != api.FinishCancel || r.fin.Frames < 2 || r.fin.Frames >= 100 || len(r.fin.Codes) != r.fin.Frames {
		t.Fatalf("cancelled take: %+v, %v", r.fin, r.err)
	}
}

// A callback that calls the engine (the studio's take callbacks take the
// service lock that Stats also takes) must not stop the client: callbacks
// run on the caller's goroutine, not on the reader that delivers Stats'
// reply. With callbacks on the reader this test deadlocks.
func TestCallbacksMayCallTheEngine(t *testing.T) {
	eng, err := OpenEngine(context.Background(), fakeSupervisor(t), LoadRequest{Model: "m", Backend: "fake"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	done := make(chan record, 1)
	go func() {
		done <- runRecorded(context.Background(), eng, api.SpeechRequest{Text: "abc", MaxFrames: 3}, func(ev api.Event) {
			if ev.Kind == api.EventFrames {
				eng.Stats()
			}
		})
	}()
	select {
	case r := <-done:
		if r.err != nil || r.fin.Frames != 3 {
			t.Fatalf("take: %+v, %v", r.fin, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a callback calling Stats blocked the take")
	}
}

// Close cancels a running take and waits for it to end.
func TestCloseCancelsTheRunningTake(t *testing.T) {
	eng, err := OpenEngine(context.Background(), fakeSupervisor(t), LoadRequest{Model: "m", Backend: "fake"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var finished atomic.Bool
	done := make(chan record, 1)
	go func() {
		var once sync.Once
		done <- runRecorded(context.Background(), eng, api.SpeechRequest{Text: "slow" + strings.Repeat("x", 500), MaxFrames: 500},
			func(ev api.Event) {
				once.Do(func() { close(started) })
				if ev.Kind == api.EventFinished {
					finished.Store(true)
				}
			})
	}()
	<-started
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	if !finished.Load() {
		t.Fatal("Close returned before the take ended")
	}
	if r := <-done; r.err != nil || r.fin.Reason != api.FinishCancel {
		t.Fatalf("take closed under it: %+v, %v", r.fin, r.err)
	}
}

// OpenIsolated's worker ends with the engine.
func TestIsolatedEngineEndsItsWorker(t *testing.T) {
	exe, _ := os.Executable()
	eng, err := OpenIsolated(context.Background(), exe, Options{Env: []string{"GPUWORKER_FAKE=engine"}}, LoadRequest{Model: "m", Backend: "fake"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := eng.(*remoteEngine).c
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the worker still runs after Close")
	}
	if PID(eng) != 0 {
		t.Fatal("PID of a closed isolated engine")
	}
	if _, err := OpenIsolated(context.Background(), exe, Options{Env: []string{"GPUWORKER_FAKE=engine"}}, LoadRequest{Model: "m", Backend: "cuda"}, nil); err == nil || !strings.Contains(err.Error(), `backend "cuda"`) {
		t.Fatalf("load on a backend the worker lacks: %v", err)
	}
}

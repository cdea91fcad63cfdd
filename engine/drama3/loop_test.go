package drama3

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"proscenium/engine/sampling"
)

// fakeBackend is a Backend whose logits the test controls. It records every
// call so the tests can check the loop's protocol.
type fakeBackend struct {
	entries  []int
	eosAt    int // frame whose semantic logits put all mass on end of speech (-1: never)
	flat     bool
	nanAt    int // frame whose codebook-1 logits hold a NaN (-1: never)
	sleep    time.Duration
	failOn   string
	calls    []string
	row      int // rows appended to the backbone
	frames   int // semantic logits handed out
	lastTail int
}

func newFake(eosAt int) *fakeBackend {
	return &fakeBackend{entries: []int{16, 8, 8, 8}, eosAt: eosAt, nanAt: -1}
}

func (f *fakeBackend) CodebookEntries() []int { return f.entries }

func (f *fakeBackend) call(name string) error {
	f.calls = append(f.calls, name)
	time.Sleep(f.sleep)
	if f.failOn != "" && strings.HasPrefix(name, f.failOn) {
		return errors.New("injected failure")
	}
	return nil
}

// peaked returns the code the fake wants the sampler to pick at a position.
func peakedCode(frame, cb, n int) int { return (frame*7 + cb*3 + 1) % n }

func (f *fakeBackend) semantic(dst []float32) {
	frame := f.frames
	f.frames++
	for i := range dst {
		dst[i] = -50
	}
	switch {
	case f.flat:
		for i := range dst[:len(dst)-1] {
			dst[i] = 0
		}
	case frame == f.eosAt:
		dst[len(dst)-1] = 50
	default:
		dst[peakedCode(frame, 0, len(dst)-1)] = 50
	}
}

// generateSteps runs Generate on the reference frame over a stepper.
func generateSteps(ctx context.Context, s Stepper, take Take, on Listener) (*Result, error) {
	b, err := NewStepFrames(s, nil)
	if err != nil {
		return nil, err
	}
	return Generate(ctx, b, take, on)
}

func (f *fakeBackend) SamplesPerFrame() int { return 4 }

func (f *fakeBackend) Begin(ctx context.Context, prompt []int, semantic []float32) error {
	f.row = len(prompt)
	if err := f.call(fmt.Sprintf("begin %d", len(prompt))); err != nil {
		return err
	}
	f.semantic(semantic)
	return nil
}

func (f *fakeBackend) TowerShared(code0 int) error {
	return f.call(fmt.Sprintf("shared %d", code0))
}

func (f *fakeBackend) TowerResidual(j, prev int, logits []float32) error {
	if err := f.call(fmt.Sprintf("residual %d %d", j, prev)); err != nil {
		return err
	}
	frame := f.frames - 1
	for i := range logits {
		logits[i] = -50
		if f.flat {
			logits[i] = 0
		}
	}
	if !f.flat {
		logits[peakedCode(frame, j, len(logits))] = 50
	}
	if frame == f.nanAt && j == 1 {
		logits[2] = float32(math.NaN())
	}
	return nil
}

func (f *fakeBackend) Advance(codes []int, semantic []float32) error {
	f.row++
	if err := f.call(fmt.Sprintf("advance %v", codes)); err != nil {
		return err
	}
	f.semantic(semantic)
	return nil
}

func (f *fakeBackend) Decode(frames [][]int, from, to int) ([]float32, error) {
	if err := f.call(fmt.Sprintf("decode %d %d", from, to)); err != nil {
		return nil, err
	}
	if to > len(frames) || from < 0 || from >= to {
		return nil, fmt.Errorf("bad range [%d, %d) of %d frames", from, to, len(frames))
	}
	pcm := make([]float32, 0, (to-from)*4)
	for _, fr := range frames[from:to] {
		for i := 0; i < 4; i++ {
			pcm = append(pcm, float32(fr[0]+i))
		}
	}
	return pcm, nil
}

// expectedCalls is the protocol for n frames of peaked codes, ending with
// (or without) the end-of-speech draw.
func expectedCalls(promptLen, frames int, entries []int, advanceAfterLast bool, decodes [][2]int) []string {
	want := []string{fmt.Sprintf("begin %d", promptLen)}
	di := 0
	for f := 0; f < frames; f++ {
		if f > 0 {
			want = append(want, fmt.Sprintf("advance %v", peakedFrame(f-1, entries)))
		}
		codes := peakedFrame(f, entries)
		want = append(want, fmt.Sprintf("shared %d", codes[0]))
		for j := 1; j < len(entries); j++ {
			want = append(want, fmt.Sprintf("residual %d %d", j, codes[j-1]))
		}
		for di < len(decodes) && decodes[di][1] == f+1 && isPolicyBoundary(decodes[di]) {
			want = append(want, fmt.Sprintf("decode %d %d", decodes[di][0], decodes[di][1]))
			di++
		}
	}
	if advanceAfterLast && frames > 0 {
		want = append(want, fmt.Sprintf("advance %v", peakedFrame(frames-1, entries)))
	}
	for ; di < len(decodes); di++ {
		want = append(want, fmt.Sprintf("decode %d %d", decodes[di][0], decodes[di][1]))
	}
	return want
}

func peakedFrame(f int, entries []int) []int {
	codes := make([]int, len(entries))
	for j, n := range entries {
		codes[j] = peakedCode(f, j, n)
	}
	return codes
}

type recorded struct {
	events []string
	pcm    []float32
}

func (r *recorded) listener() Listener {
	return Listener{
		Frames: func(n int) { r.events = append(r.events, fmt.Sprintf("frames %d", n)) },
		Audio: func(from, to int, pcm []float32) {
			r.events = append(r.events, fmt.Sprintf("audio %d %d", from, to))
			r.pcm = append(r.pcm, pcm...)
		},
	}
}

var defaultTake = Take{Prompt: []int{1, 2, 3}, Sampling: sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}, Seed: 5, MaxFrames: 100}

func TestGenerateFinishReasons(t *testing.T) {
	cases := []struct {
		name      string
		eosAt     int
		maxFrames int
		reason    string
		frames    int
		advance   bool // the loop advances past the last frame (to read end of speech)
		decodes   [][2]int
	}{
		{"stop", 5, 100, FinishStop, 5, true, [][2]int{{0, 1}, {1, 3}, {3, 5}}},
		{"stop at once", 0, 100, FinishStop, 0, false, nil},
		{"stop after one", 1, 100, FinishStop, 1, true, [][2]int{{0, 1}}},
		{"length", -1, 7, FinishLength, 7, false, [][2]int{{0, 1}, {1, 3}, {3, 7}}},
		{"length wins over a later stop", 9, 8, FinishLength, 8, false, [][2]int{{0, 1}, {1, 3}, {3, 7}, {7, 8}}},
		{"stop exactly at max", 6, 7, FinishStop, 6, true, [][2]int{{0, 1}, {1, 3}, {3, 6}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newFake(c.eosAt)
			take := defaultTake
			take.MaxFrames = c.maxFrames
			var r recorded
			res, err := generateSteps(context.Background(), b, take, r.listener())
			if err != nil {
				t.Fatal(err)
			}
			if res.Reason != c.reason || len(res.Codes) != c.frames {
				t.Fatalf("reason %q frames %d, want %q %d", res.Reason, len(res.Codes), c.reason, c.frames)
			}
			for f, codes := range res.Codes {
				if want := peakedFrame(f, b.entries); !reflect.DeepEqual(codes, want) {
					t.Fatalf("frame %d codes %v, want %v", f, codes, want)
				}
			}
			if want := expectedCalls(3, c.frames, b.entries, c.advance, c.decodes); !reflect.DeepEqual(b.calls, want) {
				t.Fatalf("backend calls\n%s\nwant\n%s", strings.Join(b.calls, "\n"), strings.Join(want, "\n"))
			}
			// Events: frames n after each frame, audio right after the frame
			// that completes its chunk, the rest at the end.
			var want []string
			di := 0
			for f := 1; f <= c.frames; f++ {
				want = append(want, fmt.Sprintf("frames %d", f))
				for di < len(c.decodes) && c.decodes[di][1] == f && isPolicyBoundary(c.decodes[di]) {
					want = append(want, fmt.Sprintf("audio %d %d", c.decodes[di][0], c.decodes[di][1]))
					di++
				}
			}
			for ; di < len(c.decodes); di++ {
				want = append(want, fmt.Sprintf("audio %d %d", c.decodes[di][0], c.decodes[di][1]))
			}
			if !reflect.DeepEqual(r.events, want) {
				t.Fatalf("events %v, want %v", r.events, want)
			}
			if len(r.pcm) != 4*c.frames {
				t.Fatalf("%d samples for %d frames", len(r.pcm), c.frames)
			}
		})
	}
}

// isPolicyBoundary reports whether the default policy itself ends chunk d
// (at 1, 3, 7, 15, 31 frames), as opposed to the end-of-take remainder.
func isPolicyBoundary(d [2]int) bool {
	to := d[1]
	return to&(to+1) == 0
}

func TestGenerateCancelEndsAtTheNextFrameAndKeepsAudio(t *testing.T) {
	for _, stopAfter := range []int{1, 2, 4} {
		b := newFake(-1)
		ctx, cancel := context.WithCancel(context.Background())
		var r recorded
		l := r.listener()
		frames := l.Frames
		l.Frames = func(n int) {
			frames(n)
			if n == stopAfter {
				cancel()
			}
		}
		res, err := generateSteps(ctx, b, defaultTake, l)
		if err != nil {
			t.Fatal(err)
		}
		if res.Reason != FinishCancel || len(res.Codes) != stopAfter {
			t.Fatalf("stop after %d: reason %q frames %d", stopAfter, res.Reason, len(res.Codes))
		}
		// No backbone step or tower call after the stop: only decodes.
		last := b.calls[len(b.calls)-1]
		if !strings.HasPrefix(last, "decode") {
			t.Fatalf("stop after %d: last call %q", stopAfter, last)
		}
		for _, c := range b.calls {
			if c == fmt.Sprintf("advance %v", peakedFrame(stopAfter-1, b.entries)) {
				t.Fatalf("stop after %d: backbone advanced past the stop", stopAfter)
			}
		}
		if len(r.pcm) != 4*stopAfter {
			t.Fatalf("stop after %d: %d samples kept", stopAfter, len(r.pcm))
		}
	}

	// Cancelled before the take starts: nothing made, no backend call, still
	// a clean finish.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := newFake(-1)
	res, err := generateSteps(ctx, b, defaultTake, Listener{})
	if err != nil || res.Reason != FinishCancel || len(res.Codes) != 0 || len(b.calls) != 0 {
		t.Fatalf("cancelled before start: %v %+v, calls %v", err, res, b.calls)
	}
}

// The loop draws codebook cb of frame f with the counter (f, cb): codes from
// flat logits equal the sampler's own draws for those counters.
func TestGenerateDrawsOneCounterPerFrameAndCodebook(t *testing.T) {
	b := newFake(-1)
	b.flat = true
	take := defaultTake
	take.MaxFrames = 12
	take.Sampling = sampling.Settings{Temperature: 1, TopP: 1, TopK: 0}
	res, err := generateSteps(context.Background(), b, take, Listener{})
	if err != nil {
		t.Fatal(err)
	}
	for f, codes := range res.Codes {
		for cb, code := range codes {
			n := b.entries[cb]
			want := int(Uniform(take.Seed, f, cb) * float64(n))
			if cb == 0 && want >= n { // flat over n codes; end of speech holds e^-50
				want = n - 1
			}
			if code != want {
				t.Fatalf("frame %d codebook %d: code %d, want %d", f, cb, code, want)
			}
		}
	}
	again, err := generateSteps(context.Background(), &fakeBackend{entries: b.entries, eosAt: -1, nanAt: -1, flat: true}, take, Listener{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Codes, res.Codes) {
		t.Fatal("the same seed gave different codes")
	}
	take.Seed++
	other, err := generateSteps(context.Background(), &fakeBackend{entries: b.entries, eosAt: -1, nanAt: -1, flat: true}, take, Listener{})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(other.Codes, res.Codes) {
		t.Fatal("another seed gave the same codes")
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, stage := range []string{"begin", "shared", "residual", "advance", "decode"} {
		b := newFake(-1)
		b.failOn = stage
		if _, err := generateSteps(context.Background(), b, defaultTake, Listener{}); err == nil || !strings.Contains(err.Error(), "injected failure") {
			t.Errorf("failure in %s: error %v", stage, err)
		}
	}
	b := newFake(-1)
	b.nanAt = 2
	_, err := generateSteps(context.Background(), b, defaultTake, Listener{})
	if err == nil || !strings.Contains(err.Error(), "frame 2 codebook 1") || !strings.Contains(err.Error(), "NaN") {
		t.Errorf("NaN logits: error %v", err)
	}
	for _, bad := range []Take{
		{Prompt: nil, Sampling: defaultTake.Sampling, MaxFrames: 5},
		{Prompt: []int{1}, Sampling: defaultTake.Sampling, MaxFrames: 0},
		{Prompt: []int{1}, Sampling: sampling.Settings{Temperature: 1, TopP: 0}, MaxFrames: 5},
		{Prompt: []int{1}, Sampling: defaultTake.Sampling, MaxFrames: 5, Chunks: ChunkPolicy{First: 0, Growth: 1, Max: 1}},
	} {
		b := newFake(-1)
		if _, err := generateSteps(context.Background(), b, bad, Listener{}); err == nil {
			t.Errorf("take %+v accepted", bad)
		} else if len(b.calls) != 0 {
			t.Errorf("take %+v: backend called before validation: %v", bad, b.calls)
		}
	}
}

// Each stage's time covers its backend calls: with every call sleeping, a
// stage's total is at least the calls it made times the sleep.
func TestGenerateStageTimes(t *testing.T) {
	b := newFake(3)
	b.sleep = time.Millisecond
	var logits int
	res, err := generateSteps(context.Background(), b, defaultTake, Listener{Logits: func(frame, cb int, l []float32) { logits++ }})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range b.calls {
		switch strings.Fields(c)[0] {
		case "begin":
			count[StagePrefill]++
		case "shared", "residual":
			count[StageTower]++
		case "advance":
			count[StageBackbone]++
		case "decode":
			count[StageCodec]++
		}
	}
	for stage, n := range count {
		if got, min := res.Stages[stage], time.Duration(n)*time.Millisecond; got < min {
			t.Errorf("stage %s: %v for %d calls of ≥ 1 ms", stage, got, n)
		}
	}
	if _, ok := res.Stages[StageSample]; !ok {
		t.Error("no sample stage")
	}
	if logits != 3*4+1 {
		t.Errorf("%d logits vectors seen, want %d", logits, 3*4+1)
	}
	if res.TimeToFirstAudio <= res.Stages[StagePrefill] || res.TimeToFirstAudio > res.Elapsed {
		t.Errorf("time to first audio %v outside (prefill %v, elapsed %v]", res.TimeToFirstAudio, res.Stages[StagePrefill], res.Elapsed)
	}
}

// A backend that leaves a logit unwritten fails the take at that draw.
type lazyBackend struct{ *fakeBackend }

func (l lazyBackend) TowerResidual(j, prev int, logits []float32) error {
	if err := l.fakeBackend.TowerResidual(j, prev, logits); err != nil {
		return err
	}
	if j == 2 {
		logits[len(logits)-1] = float32(math.NaN()) // as if never written
	}
	return nil
}

func TestGenerateCatchesUnwrittenLogits(t *testing.T) {
	_, err := generateSteps(context.Background(), lazyBackend{newFake(-1)}, defaultTake, Listener{})
	if err == nil || !strings.Contains(err.Error(), "frame 0 codebook 2") {
		t.Fatalf("error %v", err)
	}
	var b partialBackend
	b.fakeBackend = newFake(-1)
	if _, err := generateSteps(context.Background(), b, defaultTake, Listener{}); err == nil || !strings.Contains(err.Error(), "frame 0 codebook 0") {
		t.Fatalf("semantic logits left unwritten: error %v", err)
	}
}

// partialBackend writes all but the last semantic logit.
type partialBackend struct{ *fakeBackend }

func (p partialBackend) Begin(ctx context.Context, prompt []int, semantic []float32) error {
	return p.fakeBackend.Begin(ctx, prompt, semantic[:len(semantic)-1])
}

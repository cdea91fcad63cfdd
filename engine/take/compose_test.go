package take

import (
	"context"
	"errors"
	"testing"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
	"proscenium/engine/internal/testutil"
	"proscenium/engine/sampling"
)

// fakeFrames is a FrameBackend that makes nothing and records Close; it is
// no LogitsTap, so a probe makes New refuse it.
type fakeFrames struct{ closed bool }

func (f *fakeFrames) CodebookEntries() []int { return []int{8, 4} }
func (f *fakeFrames) SamplesPerFrame() int   { return 2048 }
func (f *fakeFrames) Begin(context.Context, []int, sampling.Settings, uint64) error {
	return errors.New("fake")
}
func (f *fakeFrames) Frame([]int, []int) (bool, error)   { return false, errors.New("fake") }
func (f *fakeFrames) Decode(int, int) ([]float32, error) { return nil, errors.New("fake") }
func (f *fakeFrames) Close() error                       { f.closed = true; return nil }

// Compose opens the directory once and hands the backend the opened
// checkpoint (tokenizer and codec read), takes Info from it, checks ctx
// before the backend loads, and closes the frames when the engine cannot be
// made. Broken once: without the frames.Close() in Compose the refused
// probe case leaves them open.
func TestCompose(t *testing.T) {
	base := testutil.ReadFoundFile(t, drama3.FindBaseTokenizer)
	dir := t.TempDir()
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base}); err != nil {
		t.Fatal(err)
	}
	mem := func() api.Memory { return api.Memory{Device: "fake"} }
	var seen *drama3.Checkpoint
	frames := &fakeFrames{}
	b := Backend{Name: "fake", Reason: "a test", Memory: mem, Frames: func(ck *drama3.Checkpoint) (drama3.FrameBackend, error) {
		seen = ck
		return frames, nil
	}}
	e, err := Compose(context.Background(), dir, b)
	if err != nil {
		t.Fatal(err)
	}
	if seen.Tokenizer == nil || seen.Codec == nil || seen.Weights == nil {
		t.Fatalf("the backend got a checkpoint without its parts: %+v", seen)
	}
	info := e.Info()
	if info.Model != dir || info.Backend != "fake" || info.BackendReason != "a test" || !info.Demo ||
		info.SamplesPerFrame != 2048 || info.Codebooks != seen.Config.Audio.NumCodebooks || len(info.CodebookSizes) != 2 || info.Parameters <= 0 {
		t.Errorf("info %+v", info)
	}
	e.Close()
	if !frames.closed {
		t.Error("closing the engine left the frames open")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	b.Frames = func(*drama3.Checkpoint) (drama3.FrameBackend, error) { called = true; return &fakeFrames{}, nil }
	if _, err := Compose(ctx, dir, b); !errors.Is(err, context.Canceled) || called {
		t.Errorf("cancelled: %v (backend loaded: %v)", err, called)
	}

	refused := &fakeFrames{}
	b.Frames = func(*drama3.Checkpoint) (drama3.FrameBackend, error) { return refused, nil }
	b.Probe = func(string, []float32) {}
	if _, err := Compose(context.Background(), dir, b); err == nil || !refused.closed {
		t.Errorf("a probe on a backend without logits: %v, frames closed %v", err, refused.closed)
	}

	b.Probe = nil
	b.Frames = func(*drama3.Checkpoint) (drama3.FrameBackend, error) { return nil, errors.New("no device") }
	if _, err := Compose(context.Background(), dir, b); err == nil || err.Error() != "no device" {
		t.Errorf("backend failure: %v", err)
	}
}

// closeRecorder is a TakeSet (an Interleave of one take) that records Close.
type closeRecorder struct {
	*drama3.Interleave
	closed bool
}

func (s *closeRecorder) Close() error { s.closed = true; return s.Interleave.Close() }

// A backend with batched kernels gives its own set (Backend.TakeSet) for a
// batch above one: Compose hands it the frames and the batch and the engine
// closes that set; its failure is Compose's, and with a batch of one the
// set is the interleaved one. Broken once: Compose ignoring TakeSet leaves
// the backend's set unmade.
func TestComposeTakeSet(t *testing.T) {
	base := testutil.ReadFoundFile(t, drama3.FindBaseTokenizer)
	dir := t.TempDir()
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base}); err != nil {
		t.Fatal(err)
	}
	frames := &fakeFrames{}
	var gotFirst drama3.FrameBackend
	gotBatch := 0
	var made *closeRecorder
	b := Backend{Name: "fake", Memory: func() api.Memory { return api.Memory{} }, Batch: 4,
		Frames: func(*drama3.Checkpoint) (drama3.FrameBackend, error) { return frames, nil },
		TakeSet: func(first drama3.FrameBackend, batch int) (drama3.TakeSet, error) {
			gotFirst, gotBatch = first, batch
			il, err := drama3.NewInterleave(first, nil, 1)
			made = &closeRecorder{Interleave: il}
			return made, err
		}}
	e, err := Compose(context.Background(), dir, b)
	if err != nil {
		t.Fatal(err)
	}
	if gotFirst != frames || gotBatch != 4 {
		t.Fatalf("the backend's set got frames %v (want the backend's) and batch %d (want 4)", gotFirst, gotBatch)
	}
	e.Close()
	if !made.closed {
		t.Error("closing the engine left the backend's set open")
	}

	b.TakeSet = func(drama3.FrameBackend, int) (drama3.TakeSet, error) { return nil, errors.New("no slots") }
	if _, err := Compose(context.Background(), dir, b); err == nil || err.Error() != "no slots" {
		t.Errorf("the set's failure: %v", err)
	}

	gotBatch = 0
	b.Batch = 1
	b.TakeSet = func(first drama3.FrameBackend, batch int) (drama3.TakeSet, error) { gotBatch = batch; return nil, nil }
	e, err = Compose(context.Background(), dir, b)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	if gotBatch != 0 {
		t.Errorf("a batch of one made the backend's set (batch %d)", gotBatch)
	}
}

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

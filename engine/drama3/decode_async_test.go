package drama3

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"proscenium/engine/sampling"
)

// asyncFake is a FrameBackend with an AsyncDecoder codec that records the
// order of frames and codec calls.
type asyncFake struct {
	made    int
	calls   []string
	pending *[2]int
}

func (f *asyncFake) CodebookEntries() []int { return []int{4, 4} }
func (f *asyncFake) SamplesPerFrame() int   { return 2 }
func (f *asyncFake) Close() error           { return nil }

func (f *asyncFake) Begin(context.Context, []int, sampling.Settings, uint64) error {
	f.calls = append(f.calls, "begin")
	return nil
}

func (f *asyncFake) Frame(codes, _ []int) (bool, error) {
	f.calls = append(f.calls, fmt.Sprintf("frame %d", f.made))
	codes[0], codes[1] = f.made%4, (f.made+1)%4
	f.made++
	return false, nil
}

// pcm is frames [from, to)'s samples: two per frame, from the frame index.
func asyncPCM(from, to int) []float32 {
	var out []float32
	for i := from; i < to; i++ {
		out = append(out, float32(i), float32(-i))
	}
	return out
}

func (f *asyncFake) Decode(from, to int) ([]float32, error) {
	f.calls = append(f.calls, fmt.Sprintf("decode %d %d", from, to))
	return asyncPCM(from, to), nil
}

func (f *asyncFake) DecodeStart(from, to int) error {
	if f.pending != nil {
		return fmt.Errorf("chunk [%d, %d) started while [%d, %d) is in flight", from, to, f.pending[0], f.pending[1])
	}
	f.calls = append(f.calls, fmt.Sprintf("start %d %d", from, to))
	f.pending = &[2]int{from, to}
	return nil
}

func (f *asyncFake) DecodeCollect() ([]float32, error) {
	if f.pending == nil {
		return nil, fmt.Errorf("nothing in flight")
	}
	p := *f.pending
	f.pending = nil
	f.calls = append(f.calls, fmt.Sprintf("collect %d %d", p[0], p[1]))
	return asyncPCM(p[0], p[1]), nil
}

// syncOnly hides the fake's AsyncDecoder: every chunk decodes at once.
type syncOnly struct{ FrameBackend }

// With an AsyncDecoder the first chunk decodes at once; every later chunk
// starts after the frame that completes it and is collected after the next
// frame (or at the take's end), and the listener sees the same chunks and
// samples, in order, as with a decode at once. (Broken once by collecting
// right after the start: the call order test failed.)
func TestGenerateDecodesChunksBehindTheNextFrame(t *testing.T) {
	run := func(b FrameBackend) ([][2]int, []float32, *Result) {
		var chunks [][2]int
		var pcm []float32
		res, err := Generate(context.Background(), b, Take{Prompt: []int{1, 2}, Sampling: sampling.Settings{Temperature: 1, TopP: 1}, MaxFrames: 7},
			Listener{Audio: func(from, to int, p []float32) { chunks = append(chunks, [2]int{from, to}); pcm = append(pcm, p...) }})
		if err != nil {
			t.Fatal(err)
		}
		return chunks, pcm, res
	}
	async := &asyncFake{}
	chunks, pcm, res := run(async)
	want := []string{"begin", "frame 0", "decode 0 1", "frame 1", "frame 2", "start 1 3", "frame 3", "collect 1 3",
		"frame 4", "frame 5", "frame 6", "start 3 7", "collect 3 7"}
	if !reflect.DeepEqual(async.calls, want) {
		t.Fatalf("calls\n%q\nwant\n%q", async.calls, want)
	}
	syncChunks, syncPCM, _ := run(syncOnly{&asyncFake{}})
	if !reflect.DeepEqual(chunks, syncChunks) || !reflect.DeepEqual(pcm, syncPCM) || !reflect.DeepEqual(pcm, asyncPCM(0, 7)) {
		t.Fatalf("async chunks %v (%d samples), at once %v (%d samples)", chunks, len(pcm), syncChunks, len(syncPCM))
	}
	if res.TimeToFirstAudio <= 0 || res.Stages[StageCodec] <= 0 {
		t.Fatalf("first audio %v, codec time %v", res.TimeToFirstAudio, res.Stages[StageCodec])
	}
}

// readyFake is asyncFake whose chunk in flight reports done after
// readyAfter frames since its start (never, when negative).
type readyFake struct {
	asyncFake
	readyAfter, startedAt int
}

func (f *readyFake) DecodeStart(from, to int) error {
	f.startedAt = f.made
	return f.asyncFake.DecodeStart(from, to)
}

func (f *readyFake) DecodeReady() bool {
	return f.readyAfter >= 0 && f.made-f.startedAt >= f.readyAfter
}

// A backend that can tell whether a chunk is done has it collected after
// the first frame that finds it done, not after the next frame (which would
// wait for it); one never done is waited for when the next chunk is due.
// The listener's chunks and samples stay those of a decode at once. (Broken
// once by collecting after the next frame regardless: the call orders
// below failed.)
func TestGenerateCollectsAChunkWhenItIsDone(t *testing.T) {
	for _, c := range []struct {
		readyAfter int
		want       []string
	}{
		{2, []string{"begin", "frame 0", "decode 0 1", "frame 1", "frame 2", "start 1 3", "frame 3", "frame 4", "collect 1 3",
			"frame 5", "frame 6", "start 3 7", "collect 3 7"}},
		{-1, []string{"begin", "frame 0", "decode 0 1", "frame 1", "frame 2", "start 1 3", "frame 3", "frame 4",
			"frame 5", "frame 6", "collect 1 3", "start 3 7", "collect 3 7"}},
	} {
		f := &readyFake{readyAfter: c.readyAfter}
		var pcm []float32
		_, err := Generate(context.Background(), f, Take{Prompt: []int{1, 2}, Sampling: sampling.Settings{Temperature: 1, TopP: 1}, MaxFrames: 7},
			Listener{Audio: func(from, to int, p []float32) { pcm = append(pcm, p...) }})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(f.calls, c.want) {
			t.Errorf("ready after %d frames: calls\n%q\nwant\n%q", c.readyAfter, f.calls, c.want)
		}
		if !reflect.DeepEqual(pcm, asyncPCM(0, 7)) {
			t.Errorf("ready after %d frames: %d samples, want frames 0…6's", c.readyAfter, len(pcm))
		}
	}
}

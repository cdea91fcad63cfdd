//go:build cuda

package main

import (
	"context"
	"sync"
	"testing"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
)

// TestCUDAEngineBatchedTakes runs the worker's take engine at batch 4 (the
// batched kernels: cuda.TakeFrames) with four requests at once, one of them
// cancelled after a few frames, and holds each finished take to the same
// request made alone on a batch-1 engine: the same codes and PCM bits
// under exact numerics (within fast's tolerance the share of equal frames
// is logged); the takes ran together (Finish.Batch); the cancelled one
// stopped and the others are unaffected.
func TestCUDAEngineBatchedTakes(t *testing.T) {
	dir, dev := tinyOnDevice(t)
	for _, n := range []drama3.Numerics{drama3.NumericsExact, drama3.NumericsFast} {
		dev.Numerics = n
		t.Run(n.String(), func(t *testing.T) { testBatchedTakes(t, dev, dir) })
	}
}

func testBatchedTakes(t *testing.T, dev *cuda.Device, dir string) {
	ctx := context.Background()
	texts := []string{"The first of four takes at once.", "A second line, somewhat longer than the first one is.",
		"Third.", "The fourth take is cancelled early."}
	req := func(i int) api.SpeechRequest {
		return api.SpeechRequest{Text: texts[i], Seed: uint64(5 + i), MaxFrames: 120,
			Sampling: api.Sampling{Temperature: 1, TopP: 0.9, TopK: 30}}
	}
	type out struct {
		pcm []float32
		fin *api.Finish
		err error
	}
	run := func(e api.Engine, ctx context.Context, i int, stopAfter int) out {
		var o out
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		frames := 0
		o.fin, o.err = e.Synthesize(ctx, req(i), func(ev api.Event) {
			if ev.Kind == api.EventAudio {
				o.pcm = append(o.pcm, ev.Audio.PCM...)
				frames++
				if stopAfter > 0 && frames >= stopAfter {
					cancel()
				}
			}
		})
		return o
	}

	alone := make([]out, len(texts))
	one, err := openCUDAEngine(ctx, dev, gpuworker.LoadRequest{Model: dir, Batch: 1}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts[:3] {
		if alone[i] = run(one, ctx, i, 0); alone[i].err != nil {
			t.Fatal(alone[i].err)
		}
	}
	one.Close()

	four, err := openCUDAEngine(ctx, dev, gpuworker.LoadRequest{Model: dir, Batch: 4}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer four.Close()
	if n := len(four.(cudaEngine).frames.sets); n != 1 {
		t.Fatalf("a batch-4 engine made %d batched take sets, want 1 (cuda.TakeFrames)", n)
	}
	together := make([]out, len(texts))
	var wg sync.WaitGroup
	for i := range texts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stop := 0
			if i == 3 {
				stop = 2 // audio events: the take is cancelled mid-batch
			}
			together[i] = run(four, ctx, i, stop)
		}()
	}
	wg.Wait()
	most := 0
	for i := range texts[:3] {
		g, w := together[i], alone[i]
		if g.err != nil {
			t.Fatalf("take %d together: %v", i, g.err)
		}
		most = max(most, g.fin.Batch)
		f, c := firstCodeDiff(g.fin.Codes, w.fin.Codes)
		switch {
		case f < 0:
			if d := firstBitDiff(g.pcm, w.pcm); d >= 0 {
				t.Errorf("take %d: the same codes, the PCM differs at sample %d", i, d)
			}
		case dev.Numerics.Exact():
			t.Errorf("take %d: together the codes leave the take made alone at frame %d codebook %d", i, f, c)
		default:
			t.Logf("take %d (fast numerics): together the codes leave the take made alone at frame %d of %d", i, f, len(w.fin.Codes))
		}
		t.Logf("take %d: %d frames, first audio %.1f ms, real-time factor %.3g, batch %d", i, g.fin.Frames, g.fin.TimeToFirstAudioMs, g.fin.RealTimeFactor, g.fin.Batch)
	}
	if most < 2 {
		t.Errorf("the takes never made a frame together (largest batch %d)", most)
	}
	if c := together[3]; c.err == nil && (c.fin == nil || c.fin.Frames >= 120) {
		t.Errorf("the cancelled take ran on: %+v", c.fin)
	}
	if err := four.(cudaEngine).frames.fault(); err != nil {
		t.Fatal(err)
	}
}

//go:build cuda

package main

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/cuda/device"
	"proscenium/engine/demo/qwen3"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
	"proscenium/engine/open"
)

// tinyOnDevice writes a demo checkpoint (drama3.WriteTiny, seed 1, the Qwen3
// base tokenizer) into a temporary folder and opens device 0 with a 1 GiB
// arena, closed when the test ends: the worker tests' common start.
func tinyOnDevice(t *testing.T) (dir string, dev *cuda.Device) {
	t.Helper()
	base, err := qwen3.TokenizerJSON()
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base}); err != nil {
		t.Fatal(err)
	}
	if dev, err = cuda.Open(0, 0, 1<<30); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Close)
	return dir, dev
}

// TestCUDAEngineTakes runs the worker's take engine (openCUDAEngine: the
// take engine over the pipelined CUDA frame backend) on a demo checkpoint
// and asserts what kernels/run-take-checks.sh prints: the same seed twice
// gives the same codes and PCM bits, the PCM of the streamed chunks the
// whole decode's; under the exact policy the codes are
// the CPU engine's (engine/open, CPU backend); a memory cap below the model
// refuses the load, naming the sizes, and leaves nothing allocated.
func TestCUDAEngineTakes(t *testing.T) {
	dir, dev := tinyOnDevice(t)
	// Under exact the GPU's takes have the CPU's codes (docs/MODEL.md
	// "Numerics policy"); the device's default is fast, whose takes may leave
	// the CPU's at a near-tie, so the comparison below asks for exact.
	dev.Numerics = drama3.NumericsExact
	ctx := context.Background()
	req := api.SpeechRequest{Text: "Hello there, this is a take made on the GPU.", Seed: 5, MaxFrames: 200,
		Sampling: api.Sampling{Temperature: 1, TopP: 0.9, TopK: 30}}
	take := func(e api.Engine) ([]float32, *api.Finish) {
		t.Helper()
		var pcm []float32
		fin, err := e.Synthesize(ctx, req, func(ev api.Event) {
			if ev.Kind == api.EventAudio {
				pcm = append(pcm, ev.Audio.PCM...)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(pcm) != fin.Frames*e.Info().SamplesPerFrame {
			t.Fatalf("%d samples for %d frames of %d", len(pcm), fin.Frames, e.Info().SamplesPerFrame)
		}
		return pcm, fin
	}

	gpu, err := openCUDAEngine(ctx, dev, gpuworker.LoadRequest{Model: dir, Batch: 1}, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	pcm1, fin1 := take(gpu)
	pcm2, fin2 := take(gpu)
	// The take's chunks (every one but the first decoded on the codec's
	// stream behind the next frame, drama3.AsyncDecoder) are the whole
	// decode's samples.
	whole, err := gpu.(cudaEngine).frames.all[0].Decode(0, fin2.Frames) // batch 1: the one take's frames
	if err != nil {
		t.Fatal(err)
	}
	if i := firstBitDiff(pcm2, whole); i >= 0 {
		t.Errorf("the streamed chunks differ from the whole decode at sample %d of %d/%d", i, len(pcm2), len(whole))
	}
	if err := gpu.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("GPU take: %d frames (%s), first audio %.1f ms, real-time factor %.3g", fin1.Frames, fin1.Reason, fin1.TimeToFirstAudioMs, fin1.RealTimeFactor)
	if f, c := firstCodeDiff(fin1.Codes, fin2.Codes); f >= 0 {
		t.Errorf("same seed, another take: the codes differ at frame %d codebook %d", f, c)
	}
	if i := firstBitDiff(pcm1, pcm2); i >= 0 {
		t.Errorf("same seed, another take: the PCM differs at sample %d of %d/%d", i, len(pcm1), len(pcm2))
	}

	host, err := open.Open(ctx, dir, open.Options{Backend: open.CPU})
	if err != nil {
		t.Fatal(err)
	}
	_, cpuFin := take(host)
	host.Close()
	if f, c := firstCodeDiff(fin1.Codes, cpuFin.Codes); f >= 0 {
		t.Errorf("exact policy: the GPU's codes differ from the CPU's at frame %d codebook %d (%d and %d frames)", f, c, len(fin1.Codes), len(cpuFin.Codes))
	}

	// A cap below the model: refused before anything is allocated.
	if used := dev.Pool.Stats(cuda.DeviceMem).Used; used != 0 {
		t.Fatalf("the closed engine left %d bytes allocated", used)
	}
	dev.Pool.SetCap(cuda.DeviceMem, 50_000_000)
	defer dev.Pool.SetCap(cuda.DeviceMem, 0)
	capped, err := openCUDAEngine(ctx, dev, gpuworker.LoadRequest{Model: dir, Batch: 1}, "test", nil)
	if err == nil {
		capped.Close()
		t.Fatal("the model loaded under a 50 MB cap")
	}
	if !errors.Is(err, device.ErrOverCap) || !strings.Contains(err.Error(), "MiB") {
		t.Errorf("under a 50 MB cap: %v, want a refusal over the cap naming the sizes", err)
	}
	if used := dev.Pool.Stats(cuda.DeviceMem).Used; used != 0 {
		t.Errorf("a refused load left %d bytes allocated", used)
	}
}

// towerDrawnTables is the bytes of the tower's drawn-code tables of the
// checkpoint in dir (cuda.TowerDrawnEHBytes): what a load gives up first
// when the device lacks room for the whole model.
func towerDrawnTables(t *testing.T, dir string) int64 {
	t.Helper()
	ck, err := drama3.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	g, err := cuda.TowerGeometryOf(&ck.Config.Audio)
	if err != nil {
		t.Fatal(err)
	}
	return cuda.TowerDrawnEHBytes(g)
}

// firstCodeDiff is the first frame and codebook where two takes' codes
// differ ((−1, −1): none; (f, −1): one is longer).
func firstCodeDiff(a, b [][]int) (int, int) {
	for f := 0; f < min(len(a), len(b)); f++ {
		for c := range a[f] {
			if a[f][c] != b[f][c] {
				return f, c
			}
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b)), -1
	}
	return -1, -1
}

// firstBitDiff is the first sample whose float32 bits differ (or the
// shorter length), −1 when a and b are the same.
func firstBitDiff(a, b []float32) int {
	for i := 0; i < min(len(a), len(b)); i++ {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

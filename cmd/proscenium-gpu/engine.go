//go:build cuda

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"proscenium/engine"
	"proscenium/engine/audio"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/take"
	"proscenium/engine/tokenizer"
)

// openCUDAEngine loads the checkpoint directory dir onto dev (admission of
// the exact bytes first, progress as bytes on the device) and returns the
// take engine over the CUDA frame backend; reason goes to Info.BackendReason.
func openCUDAEngine(ctx context.Context, dev *cuda.Device, dir, reason string, progress func(done, total int64)) (engine.Engine, error) {
	tok, err := tokenizer.LoadFile(filepath.Join(dir, drama3.TokenizerFile))
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	demo, err := drama3.UsesDemoCodec(dir)
	if err != nil {
		return nil, err
	}
	codec, err := loadCodecPlan(dir)
	if err != nil {
		return nil, err
	}
	frames, cfg, err := cuda.LoadFrames(dev, dir, tok, codec, cuda.FramesOptions{Pipeline: true}, progress)
	if err != nil {
		return nil, err
	}
	info := engine.Info{
		Model: dir, Backend: "cuda", BackendReason: reason, Demo: demo,
		SampleRate: audio.SampleRate, SamplesPerFrame: frames.SamplesPerFrame(),
		Codebooks: cfg.Audio.NumCodebooks, CodebookSizes: append([]int(nil), frames.CodebookEntries()...),
		Parameters: drama3.CountParameters(cfg).Total(),
	}
	eng, err := take.New(take.Config{Info: info, Backend: frames, Tokenizer: tok, Memory: deviceMemory(dev)})
	if err != nil {
		frames.Close()
		return nil, err
	}
	refs := &deviceReferences{dev: dev, path: filepath.Join(dir, drama3.CodecFile)}
	return cudaEngine{Engine: eng, frames: frames, deviceReferences: refs}, nil
}

// deviceMemory reports the pool's device memory (held, peak, cap), the
// device's total and the pinned host memory held.
func deviceMemory(dev *cuda.Device) func() engine.Memory {
	return func() engine.Memory {
		s := dev.Pool.Stats(cuda.DeviceMem)
		return engine.Memory{Device: dev.Info.Name, Used: s.Used, Peak: s.Peak, Cap: s.Cap,
			Total: dev.Info.TotalMem, Pinned: dev.Pool.Stats(cuda.PinnedMem).Used}
	}
}

// cudaEngine is the worker's engine: the take engine over the CUDA frame
// backend, which encodes reference recordings on the device too
// (engine.ReferenceEncoder), and ends the worker after a take that met a
// device error: a CUDA context with a sticky error cannot run the next take,
// and a fresh worker (the client starts one and reloads the model for the
// next take) can. The take's error reply goes out first.
type cudaEngine struct {
	*take.Engine
	frames *cuda.Frames
	*deviceReferences
}

// Close frees the reference encoder, then the model.
func (e cudaEngine) Close() error {
	e.deviceReferences.close()
	return e.Engine.Close()
}

func (e cudaEngine) Synthesize(ctx context.Context, req engine.SpeechRequest, emit func(engine.Event)) (*engine.Finish, error) {
	fin, err := e.Engine.Synthesize(ctx, req, emit)
	if fault := e.frames.Fault(); fault != nil {
		fmt.Fprintf(os.Stderr, "proscenium-gpu: device error (%v): ending the worker; the next take starts a fresh one\n", fault)
		go func() {
			time.Sleep(faultExitDelay)
			os.Exit(3)
		}()
	}
	return fin, err
}

// faultExitDelay lets the take's reply reach the client before the worker ends.
const faultExitDelay = 500 * time.Millisecond

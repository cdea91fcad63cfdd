//go:build cuda

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"proscenium/engine"
	"proscenium/engine/audio"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/take"
	"proscenium/engine/tokenizer"
)

// openCUDAEngine loads the checkpoint directory dir onto dev (admission of
// the exact bytes for batch takes first, progress as bytes on the device)
// and returns the take engine over the CUDA frame backend, up to batch takes
// together (0: engine.DefaultBatch), each with its own device state, their
// frames interleaved; reason goes to Info.BackendReason.
func openCUDAEngine(ctx context.Context, dev *cuda.Device, dir, reason string, batch int, progress func(done, total int64)) (engine.Engine, error) {
	batch, err := engine.BatchOf(batch)
	if err != nil {
		return nil, err
	}
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
	frames, cfg, err := cuda.LoadFrames(dev, dir, tok, cuda.FramesOptions{Pipeline: true, Takes: batch}, progress)
	if err != nil {
		return nil, err
	}
	all := &framesSet{all: []*cuda.Frames{frames}}
	set, err := drama3.NewInterleave(frames, func() (drama3.FrameBackend, error) {
		f, err := frames.NewTake()
		if err != nil {
			return nil, err
		}
		all.add(f)
		return f, nil
	}, batch)
	if err != nil {
		frames.Close()
		return nil, err
	}
	info := engine.Info{
		Model: dir, Backend: "cuda", BackendReason: reason, Demo: demo,
		SampleRate: audio.SampleRate, SamplesPerFrame: frames.SamplesPerFrame(),
		Codebooks: cfg.Audio.NumCodebooks, CodebookSizes: append([]int(nil), frames.CodebookEntries()...),
		Parameters: drama3.CountParameters(cfg).Total(),
	}
	eng, err := take.New(take.Config{Info: info, Takes: set, Tokenizer: tok, Memory: deviceMemory(dev)})
	if err != nil {
		set.Close()
		return nil, err
	}
	refs := &deviceReferences{dev: dev, path: filepath.Join(dir, drama3.CodecFile)}
	return cudaEngine{Engine: eng, frames: all, deviceReferences: refs}, nil
}

// framesSet is every take's Frames of an engine, for Fault: the scheduler
// adds one as a take first needs it, while takes ask.
type framesSet struct {
	mu  sync.Mutex
	all []*cuda.Frames
}

func (s *framesSet) add(f *cuda.Frames) {
	s.mu.Lock()
	s.all = append(s.all, f)
	s.mu.Unlock()
}

// fault is the first device error any take's frames met (the context is
// one: after one, none can go on).
func (s *framesSet) fault() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.all {
		if err := f.Fault(); err != nil {
			return err
		}
	}
	return nil
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
	frames *framesSet
	*deviceReferences
}

// Close frees the reference encoder, then the model.
func (e cudaEngine) Close() error {
	e.deviceReferences.close()
	return e.Engine.Close()
}

func (e cudaEngine) Synthesize(ctx context.Context, req engine.SpeechRequest, emit func(engine.Event)) (*engine.Finish, error) {
	fin, err := e.Engine.Synthesize(ctx, req, emit)
	if fault := e.frames.fault(); fault != nil {
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

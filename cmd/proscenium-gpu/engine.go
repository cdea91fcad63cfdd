//go:build cuda

package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
	"proscenium/engine/take"
)

// openCUDAEngine loads req's checkpoint directory onto dev (admission of
// the exact bytes for req.Batch takes first, progress as bytes on the
// device) and returns the take engine over the CUDA frame backend
// (take.Compose, as the CPU's), up to req.Batch takes together, each with
// its own device state, their frames interleaved, one voice prefix cache of
// req.VoiceCacheBytes for all of them (0: automatic, cuda.AutoVoiceCache);
// reason goes to Info.BackendReason.
// req's memory cap and numerics are the device's (the opener sets them).
func openCUDAEngine(ctx context.Context, dev *cuda.Device, req gpuworker.LoadRequest, reason string, progress func(done, total int64)) (api.Engine, error) {
	dir := req.Model
	n, err := api.BatchOf(req.Batch)
	if err != nil {
		return nil, err
	}
	all := &framesSet{}
	var loaded atomic.Pointer[cuda.Frames]
	// Several takes run on the batched kernels (one B-row step and tower a
	// frame for all of them); PROSCENIUM_GPU_BATCHED=0 interleaves each
	// take's own frames instead (a take's codes are the same either way).
	batched := n > 1 && os.Getenv("PROSCENIUM_GPU_BATCHED") != "0"
	backend := take.Backend{Name: "cuda", Reason: reason, Memory: deviceMemory(dev, &loaded), Batch: n,
		Frames: func(ck *drama3.Checkpoint) (drama3.FrameBackend, error) {
			codec, err := codecPlan(ck.Codec)
			if err != nil {
				return nil, err
			}
			say := func(p cuda.TierPlan) { fmt.Fprintf(os.Stderr, "proscenium-gpu: %s: %s\n", dir, p) }
			f, err := cuda.LoadFrames(dev, ck, codec, cuda.FramesOptions{Pipeline: true, Takes: n, Batched: batched, Tier: say,
				PrefixCacheBytes: req.VoiceCacheBytes, PrefixCacheAuto: req.VoiceCacheBytes == 0}, progress)
			if err == nil {
				all.add(f)
				loaded.Store(f)
			}
			return f, err
		},
		NewTake: func(first drama3.FrameBackend) (drama3.FrameBackend, error) {
			f, err := first.(*cuda.Frames).NewTake()
			if err == nil {
				all.add(f)
			}
			return f, err
		}}
	if batched {
		backend.TakeSet = func(first drama3.FrameBackend, _ int) (drama3.TakeSet, error) {
			s, err := cuda.NewTakeFrames(first.(*cuda.Frames))
			if err == nil {
				all.addSet(s)
			}
			return s, err
		}
	}
	eng, err := take.Compose(ctx, dir, backend)
	if err != nil {
		return nil, err
	}
	refs := &deviceReferences{dev: dev, dir: dir}
	return cudaEngine{Engine: eng, frames: all, deviceReferences: refs}, nil
}

// framesSet is every take's Frames of an engine, for Fault: the scheduler
// adds one as a take first needs it, while takes ask.
type framesSet struct {
	mu   sync.Mutex
	all  []*cuda.Frames
	sets []*cuda.TakeFrames
}

func (s *framesSet) add(f *cuda.Frames) {
	s.mu.Lock()
	s.all = append(s.all, f)
	s.mu.Unlock()
}

// addSet adds the batched takes' set (its slots' faults are its own).
func (s *framesSet) addSet(t *cuda.TakeFrames) {
	s.mu.Lock()
	s.sets = append(s.sets, t)
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
	for _, t := range s.sets {
		if err := t.Fault(); err != nil {
			return err
		}
	}
	return nil
}

// deviceMemory reports the pool's device memory (held, peak, cap), the
// device's total, the pinned host memory held (buffers, experts and a host
// tier's cached voices) and, once frames has loaded, where its routed
// experts and its cached voices live.
func deviceMemory(dev *cuda.Device, frames *atomic.Pointer[cuda.Frames]) func() api.Memory {
	return func() api.Memory {
		s := dev.Pool.Stats(cuda.DeviceMem)
		m := api.Memory{Device: dev.Info.Name, Used: s.Used, Peak: s.Peak, Cap: s.Cap,
			Total: dev.Info.TotalMem, Pinned: dev.Pool.Stats(cuda.PinnedMem).Used + dev.Pool.Stats(cuda.HostTierMem).Used}
		if f := frames.Load(); f != nil {
			m.Experts = expertTier(f.Tier(), f.ExpertCache())
			m.VoiceCacheInHost = f.PrefixCacheInHost()
		}
		return m
	}
}

// cudaEngine is the worker's engine: the take engine over the CUDA frame
// backend, which encodes reference recordings on the device too
// (api.ReferenceEncoder), and ends the worker after a take that met a
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

func (e cudaEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	fin, err := e.Engine.Synthesize(ctx, req, emit)
	e.endOnFault()
	return fin, err
}

// PrimeVoice is the take engine's (api.VoicePrimer), ending the worker
// after a device error as a take does.
func (e cudaEngine) PrimeVoice(ctx context.Context, refs []api.Reference) (*api.Primed, error) {
	p, err := e.Engine.PrimeVoice(ctx, refs)
	e.endOnFault()
	return p, err
}

// endOnFault ends the worker, after a moment for the reply to reach the
// client, when the device has faulted: nothing on it can be trusted.
func (e cudaEngine) endOnFault() {
	if fault := e.frames.fault(); fault != nil {
		fmt.Fprintf(os.Stderr, "proscenium-gpu: device error (%v): ending the worker; the next take starts a fresh one\n", fault)
		go func() {
			time.Sleep(faultExitDelay)
			os.Exit(3)
		}()
	}
}

// faultExitDelay lets the take's reply reach the client before the worker ends.
const faultExitDelay = 500 * time.Millisecond

// expertTier is a memory tier as the engine's stats report it, with the
// expert cache's counts c (host tier only).
func expertTier(p cuda.TierPlan, c cuda.ExpertCacheStats) *api.ExpertTier {
	dev := p.DeviceExperts
	if p.ReadLayers() > p.DeviceLayers { // the last layer's experts on the prefill stage
		dev += p.Stage
	}
	x := &api.ExpertTier{Tier: p.Tier.String(), DeviceBytes: dev, HostBytes: p.HostExperts,
		DeviceLayers: p.ReadLayers(), Layers: p.Layers, HitRate: p.DeviceHitRate(), BusBytesPerFrame: p.BusBytesPerStep(1)}
	if p.Tier == cuda.TierHostExperts {
		x.Cache = expertCache(c)
	}
	return x
}

// expertCache is the cache's counts as the engine's stats report them.
func expertCache(c cuda.ExpertCacheStats) *api.ExpertCache {
	return &api.ExpertCache{Slots: c.Slots, Resident: c.Resident, Total: c.Total, Hits: c.Hits, Misses: c.Misses,
		HitRate: c.HitRate(), Promotions: c.Promotions, Evictions: c.Evictions, Frames: c.Frames, BusBytesPerFrame: c.BusBytesPerFrame()}
}

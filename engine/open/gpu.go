package open

import (
	"context"
	"math"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/gpuworker"
)

// This file answers the studio's questions about the GPU backend without
// the studio importing it: which device the worker opens, and how much
// device memory a model needs there.

// DescribeGPU starts the GPU worker process (engine/gpuworker), describes
// the device it opened and stops it. This process never loads CUDA itself:
// a machine without a GPU or driver gets the worker's reason (a
// *gpuworker.UnavailableError), not a crash.
func DescribeGPU(ctx context.Context) (string, error) {
	hello, err := gpuworker.Probe(ctx)
	if err != nil {
		return "", err
	}
	return hello.Device.String(), nil
}

// GPUModelBytes is the device memory the GPU backend admits for the model
// in dir loaded with opts: the weights and the voice cache
// (GPUVoiceCache) once, and each of opts.Batch takes' states and scratch
// at the default context (cuda.ModelTakesBytes), before loading it.
func GPUModelBytes(dir string, opts Options) (int64, error) {
	in, err := tierInput(dir, opts)
	return in.ModelBytes + in.VoiceCache, err
}

// tierInput is cuda.ModelTierInput for a load with opts: opts.Batch takes
// (0: api.DefaultBatch) and the voice cache they ask for (none set: the
// default at least, more where the device has room, cuda.AutoVoiceCache).
func tierInput(dir string, opts Options) (cuda.TierInput, error) {
	n, err := api.BatchOf(opts.Batch)
	if err != nil {
		return cuda.TierInput{}, err
	}
	if err := opts.check(); err != nil {
		return cuda.TierInput{}, err
	}
	in, err := cuda.ModelTierInput(dir, 0, n)
	in.VoiceCache, in.VoiceCacheAuto = GPUVoiceCache(opts), opts.VoiceCacheBytes == 0
	return in, err
}

// GPUVoiceCache is the voice cache a GPU load with opts asks for: the
// part of GPUModelBytes kept for cached voices (opts.VoiceCacheBytes, else
// the default, cuda.DefaultPrefixCacheBytes, which a load with room on the
// device grows: cuda.AutoVoiceCache).
func GPUVoiceCache(opts Options) int64 {
	return opts.voiceCacheOr(cuda.DefaultPrefixCacheBytes)
}

// ErrGPUDoesNotFit is what a refused tier wraps.
var ErrGPUDoesNotFit = cuda.ErrDoesNotFit

// GPUMemory is the device memory the GPU backend needs for a model and its
// batch of takes (the codec not counted): with every weight on the device
// (Whole), and the least it runs with (Dense): every routed expert in
// pinned host memory but the last layer's, which the prefill stage holds,
// and the token embedding and LM head there too (HostDense), and the expert
// cache's table (ExpertCache, part of Dense); the experts of one layer are
// what each further layer on the device adds.
type GPUMemory struct {
	Whole        int64 `json:"whole_bytes"`
	Dense        int64 `json:"dense_bytes"`
	HostDense    int64 `json:"host_dense_bytes"`
	LayerExperts int64 `json:"layer_expert_bytes"`
	Layers       int   `json:"layers"`
	ExpertCache  int64 `json:"expert_cache_table_bytes"`
	// VoiceCache is the voice prefix cache a load adds when the device has
	// room for it beside Whole (none under the host tier). VoiceCacheUpTo
	// is set when no size was: a device with more room gives the cache an
	// eighth of the room, up to VoiceCacheUpTo (cuda.AutoVoiceCache).
	VoiceCache     int64 `json:"voice_cache_bytes"`
	VoiceCacheUpTo int64 `json:"voice_cache_up_to_bytes,omitempty"`
	// Cap is a device budget asked about, and UnderCap the tier it gets
	// (GPUTierUnderCap's sentence, or why it is refused).
	Cap      int64  `json:"cap_bytes,omitempty"`
	UnderCap string `json:"under_cap,omitempty"`
}

// GPUMemoryOf is GPUMemory for the checkpoint in dir loaded with opts,
// and the tier under opts.MemoryCap (0: not asked).
func GPUMemoryOf(dir string, opts Options) (GPUMemory, error) {
	in, err := tierInput(dir, opts)
	if err != nil {
		return GPUMemory{}, err
	}
	capBytes := opts.MemoryCap
	m := GPUMemory{Whole: in.ModelBytes, VoiceCache: in.VoiceCache, Dense: in.ModelBytes - in.HostDense, HostDense: in.HostDense,
		Layers: len(in.LayerExperts), Cap: capBytes}
	if in.VoiceCacheAuto {
		m.VoiceCacheUpTo = cuda.MaxAutoVoiceCache
	}
	for _, b := range in.LayerExperts {
		m.Dense -= b
		m.LayerExperts = max(m.LayerExperts, b)
	}
	m.ExpertCache = cuda.ExpertCacheBytes(m.Layers, in.Experts)
	m.Dense += m.LayerExperts + m.ExpertCache // the stage and the cache's table (cuda.PlanTier)
	if capBytes > 0 {
		if p, err := tierUnderCap(in, capBytes); err != nil {
			m.UnderCap = "refused: " + err.Error()
		} else {
			m.UnderCap = p.String()
		}
	}
	return m, nil
}

// GPUTierUnderCap is the memory tier the GPU backend chooses for the model
// in dir loaded with opts when the device budget is opts.MemoryCap
// (cuda.PlanTier: "fits on the device", or the routed experts of the last
// layers in pinned host memory), as the sentence the load announces. The
// device's free memory and the host's are the worker's to check at load;
// the codec is not counted. A cap too small even with every expert in host
// memory is an error wrapping ErrGPUDoesNotFit, with the numbers.
func GPUTierUnderCap(dir string, opts Options) (string, error) {
	in, err := tierInput(dir, opts)
	if err != nil {
		return "", err
	}
	p, err := tierUnderCap(in, opts.MemoryCap)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

func tierUnderCap(in cuda.TierInput, capBytes int64) (cuda.TierPlan, error) {
	in.Cap, in.DeviceFree, in.Headroom = capBytes, capBytes+cuda.DefaultHeadroom, cuda.DefaultHeadroom
	in.HostAvailable = math.MaxInt64
	return cuda.PlanTier(in)
}

// GPUTierOn is the tier the GPU backend chooses for the model in dir
// loaded with opts on a device with free bytes free under opts.MemoryCap
// (0: none), with this machine's available host memory: what a load would
// announce now (the codec not counted).
func GPUTierOn(dir string, free int64, opts Options) (string, error) {
	in, err := tierInput(dir, opts)
	if err != nil {
		return "", err
	}
	in.DeviceFree, in.Cap, in.Headroom = free, opts.MemoryCap, cuda.DefaultHeadroom
	p, err := cuda.PlanTierHere(in)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// Package open is the one place that chooses an engine's backend and opens
// a checkpoint directory with it. Every command and the studio call Open
// with the user's --backend setting; none chooses on its own.
//
// "cpu" runs the reference backend in this process. "cuda" runs the GPU
// backend in the worker process (proscenium-gpu), and Isolate runs any
// backend there; that path is remote.go's. "auto" takes CUDA when the
// worker's probe finds a usable GPU, else the CPU, and keeps the reason in
// Info.BackendReason for the UI.
package open

import (
	"context"
	"fmt"
	"slices"

	"proscenium/engine/api"
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
	"proscenium/engine/take"
)

// Backends, as --backend spells them.
const (
	Auto = "auto"
	CPU  = "cpu"
	CUDA = "cuda"
)

// Backends lists the valid --backend values.
var Backends = []string{Auto, CPU, CUDA}

// Options configures Open.
type Options struct {
	// Backend is Auto (also ""), CPU or CUDA.
	Backend string
	// Isolate runs the engine in a worker process even for the CPU backend
	// (the same process boundary CUDA takes use).
	Isolate bool
	// Worker is the worker binary (proscenium-gpu); "" finds it next to this
	// executable.
	Worker string
	// Probe, when set, sees intermediate tensors of every take for stage
	// comparisons (proscenium debug take): the CPU backend's
	// ("prefill_hidden", "tower_layer.L", "feedback_row", "backbone_hidden";
	// see cpu.Backend) and every logits vector a draw reads as "logits.CB".
	// It must not keep values. In-process backends only.
	Probe func(name string, values []float32)
	// Progress, when set, is called as the weights load: bytes read of the
	// stored weights' total.
	Progress func(done, total int64)
	// MemoryCap is the settings' memory cap in bytes (0: none): the GPU
	// worker's pool cap, against which it admits a model.
	MemoryCap int64
	// Batch is the most takes the engine runs together (0:
	// api.DefaultBatch; 1: one at a time). Each live take holds its own
	// caches.
	Batch int
	// Numerics is the GPU backbone's numerics policy (drama3.Numerics:
	// "fast", the default, or "exact"); the CPU backend computes exactly
	// under either.
	Numerics drama3.Numerics
	// VoiceCacheBytes is the most memory the voice cache keeps voices'
	// states in (docs/MODEL.md "Voice prefix cache"; 0: the backend's
	// default, 512 MiB, which the GPU grows where it has room:
	// cuda.AutoVoiceCache): device memory on the GPU, granted what is left
	// beside the model (pinned host memory under the host tier), host
	// memory on the CPU.
	VoiceCacheBytes int64

	reason string // Open's choice, for a worker's Info.BackendReason
}

// Remote opens an engine in the worker process: remote.go sets it. nil: this
// build has no worker path.
var remote func(ctx context.Context, dir string, opts Options) (api.Engine, error)

// probeGPU asks the worker whether a usable GPU is there, and why not:
// remote.go sets it. nil: this build cannot probe.
var probeGPU func(ctx context.Context, opts Options) (ok bool, reason string)

// CheckBackend refuses a --backend value that is not one of Backends.
func CheckBackend(name string) error {
	if slices.Contains(Backends, name) {
		return nil
	}
	return fmt.Errorf("backend %q: want one of auto, cpu, cuda", name)
}

// Open opens the checkpoint directory dir (config.json, safetensors,
// tokenizer.json, codec.pth) on the backend opts choose.
func Open(ctx context.Context, dir string, opts Options) (api.Engine, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	backend, reason := opts.Backend, ""
	switch backend {
	case CPU:
		reason = "--backend cpu"
	case CUDA:
		reason = "--backend cuda"
	case Auto, "":
		switch {
		case opts.Probe != nil:
			backend, reason = CPU, "auto: probes need the in-process CPU backend"
		case probeGPU == nil:
			backend, reason = CPU, "auto: this build has no GPU worker"
		default:
			ok, why := probeGPU(ctx, opts)
			if ok {
				backend, reason = CUDA, "auto: "+why
			} else {
				backend, reason = CPU, "auto: no usable GPU ("+why+")"
			}
		}
	default:
		return nil, CheckBackend(opts.Backend)
	}
	if backend == CUDA || opts.Isolate {
		if remote == nil {
			return nil, fmt.Errorf("backend %s in a worker process: not wired in this build", backend)
		}
		if opts.Probe != nil {
			return nil, fmt.Errorf("probes need the in-process CPU backend")
		}
		o := opts
		o.Backend, o.reason = backend, reason
		return remote(ctx, dir, o)
	}
	return OpenCPU(ctx, dir, opts, reason)
}

// check refuses options no backend can take, by the worker's rule
// (gpuworker.LoadRequest.Check).
func (o Options) check() error {
	return gpuworker.LoadRequest{MemoryCap: o.MemoryCap, VoiceCacheBytes: o.VoiceCacheBytes, Numerics: string(o.Numerics)}.Check()
}

// voiceCacheOr is the voice cache opts ask for, else def.
func (o Options) voiceCacheOr(def int64) int64 {
	if o.VoiceCacheBytes > 0 {
		return o.VoiceCacheBytes
	}
	return def
}

// OpenCPU opens dir on the CPU backend in this process (the worker serves
// isolated CPU takes with it); reason goes to Info.BackendReason.
func OpenCPU(ctx context.Context, dir string, opts Options, reason string) (api.Engine, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	e, err := take.Compose(ctx, dir, take.Backend{Name: CPU, Reason: reason, Memory: take.HostMemory, Probe: opts.Probe,
		Frames: func(ck *drama3.Checkpoint) (drama3.FrameBackend, error) {
			b, err := cpu.LoadBackend(ck, opts.Progress)
			if err != nil {
				return nil, err
			}
			b.Probe = opts.Probe
			b.SetPrefixCache(drama3.NewPrefixCache(opts.voiceCacheOr(cpu.DefaultPrefixCacheBytes)))
			return drama3.NewStepFrames(b, nil)
		},
		// Each take beside the first gets its own caches over the same
		// weights when it first needs them (host memory, no admission).
		Batch: opts.Batch,
		NewTake: func(first drama3.FrameBackend) (drama3.FrameBackend, error) {
			b, err := first.(*drama3.StepFrames).Stepper().(*cpu.Backend).NewTake()
			if err != nil {
				return nil, err
			}
			return drama3.NewStepFrames(b, nil)
		}})
	if err != nil {
		return nil, err
	}
	return e, nil
}

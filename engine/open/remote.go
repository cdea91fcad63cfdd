package open

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"proscenium/engine/api"
	"proscenium/engine/gpuworker"
)

// This file is the worker path: the CUDA backend runs in proscenium-gpu
// (engine/gpuworker), which links CUDA so that this process never does. A
// missing worker binary, no GPU or no driver each come back as the worker's
// reason (gpuworker.UnavailableError), which auto shows before taking the
// CPU. Isolate runs the CPU backend in this program's own binary started as
// its worker (ServeWorker): the same client and serving code as CUDA takes,
// so CI tests the whole boundary without a GPU.

func init() {
	remote = openRemote
	probeGPU = probeWorker
}

// workerPath is opts.Worker, else the worker gpuworker.Locate finds.
func workerPath(opts Options) (string, error) {
	if opts.Worker != "" {
		return opts.Worker, nil
	}
	return gpuworker.Locate()
}

// openRemote loads dir in a worker of its own (proscenium-gpu for CUDA, this
// executable for the CPU): closing the engine ends the worker; a worker that
// dies mid-take ends that take with an error naming it, and the next take
// starts a fresh one and reloads.
func openRemote(ctx context.Context, dir string, opts Options) (api.Engine, error) {
	switch opts.Backend {
	case CPU:
		return gpuworker.OpenInSelf(ctx, gpuworker.LoadRequest{Model: dir, Backend: CPU, Reason: opts.reason, Batch: opts.Batch, VoiceCacheBytes: opts.VoiceCacheBytes}, opts.Progress)
	case CUDA:
	default:
		return nil, fmt.Errorf("backend %q in a worker process: want cpu or cuda", opts.Backend)
	}
	path, err := workerPath(opts)
	if err != nil {
		return nil, err
	}
	return gpuworker.OpenIsolated(ctx, path, gpuworker.Options{}, gpuworker.LoadRequest{Model: dir, Backend: CUDA, MemoryCap: opts.MemoryCap, Numerics: string(opts.Numerics), Reason: opts.reason, Batch: opts.Batch, VoiceCacheBytes: opts.VoiceCacheBytes}, opts.Progress)
}

// probeWorker starts the worker, reads its hello and stops it: ok when it
// opened a GPU and serves the cuda backend; why describes the device or the
// reason it cannot.
func probeWorker(ctx context.Context, opts Options) (bool, string) {
	path, err := workerPath(opts)
	if err != nil {
		return false, err.Error()
	}
	hello, err := gpuworker.ProbePath(ctx, path)
	if err != nil {
		return false, err.Error()
	}
	if !slices.Contains(hello.Backends, CUDA) {
		return false, hello.Device.String() + ": this worker does not serve the cuda backend"
	}
	return true, hello.Device.String()
}

// ServeWorker is the CPU engine worker's main: `proscenium worker`, and the
// studio's binary started with gpuworker.SelfCommand. It serves OpenCPU on
// stdin and stdout until stdin ends.
func ServeWorker() error {
	return gpuworker.RunWorker(CPU, func(ctx context.Context, req gpuworker.LoadRequest, progress func(done, total int64)) (api.Engine, error) {
		return OpenCPU(ctx, req.Model, Options{Progress: progress, Batch: req.Batch, VoiceCacheBytes: req.VoiceCacheBytes}, strings.TrimPrefix(req.Reason+"; in a worker process", "; "))
	})
}

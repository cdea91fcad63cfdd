package open

import (
	"context"
	"fmt"
	"slices"

	"proscenium/engine"
	"proscenium/engine/gpuworker"
)

// This file is the worker path: the CUDA backend runs in proscenium-gpu
// (engine/gpuworker), which links CUDA so that this process never does. A
// missing worker binary, no GPU or no driver each come back as the worker's
// reason (gpuworker.UnavailableError), which auto shows before taking the
// CPU.

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

// openRemote loads dir on the CUDA backend in a worker of its own: closing
// the engine ends the worker; a worker that dies mid-take ends that take
// with an error naming it, and the next take starts a fresh one and reloads.
func openRemote(ctx context.Context, dir string, opts Options) (engine.Engine, error) {
	if opts.Backend != CUDA {
		return nil, fmt.Errorf("backend %s in a worker process: the CPU backend's worker is `proscenium worker` (synth/serve --isolate)", opts.Backend)
	}
	path, err := workerPath(opts)
	if err != nil {
		return nil, err
	}
	return gpuworker.OpenIsolated(ctx, path, gpuworker.Options{}, gpuworker.LoadRequest{Model: dir, Backend: CUDA, MemoryCap: opts.MemoryCap}, opts.Progress)
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

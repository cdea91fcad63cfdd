package main

import (
	"context"
	"fmt"
	"os"

	"proscenium/engine"
	"proscenium/engine/gpuworker"
	"proscenium/engine/open"
)

// `proscenium worker` is the engine worker for the CPU backend: started by
// the program itself (synth --isolate, serve --isolate, the studio's
// isolate_engine setting), it serves the engine on stdin and stdout with the
// same protocol and serving code as the GPU worker, proscenium-gpu. Not
// listed in the usage: people do not run it.

func init() {
	register(command{name: "worker", hidden: true, summary: "serve the CPU engine on stdin/stdout (started by --isolate)", run: runWorker})
}

func runWorker(args []string) error {
	fs := newFlags("worker")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	proto, err := gpuworker.ProtocolOutput()
	if err != nil {
		return err
	}
	return gpuworker.ServeEngine(os.Stdin, proto, gpuworker.Hello{PID: os.Getpid(), Backends: []string{"cpu"}}, openInWorker)
}

// openInWorker opens a model in the worker process, in-process there.
func openInWorker(ctx context.Context, req gpuworker.LoadRequest, progress func(done, total int64)) (engine.Engine, error) {
	if req.Backend != "cpu" {
		return nil, fmt.Errorf("backend %q: `proscenium worker` serves the cpu backend (the cuda backend runs in %s)", req.Backend, gpuworker.WorkerName)
	}
	return open.OpenCPU(ctx, req.Model, open.Options{Progress: progress}, "isolated: proscenium worker")
}

// openEngine opens the checkpoint dir on the backend --backend names
// (engine/open chooses; cuda runs in proscenium-gpu), or, with isolate and a
// backend that is not cuda, on the CPU backend in a child `proscenium worker`,
// whose takes are the same bytes.
// memCap is the settings' memory cap (the GPU worker's pool cap; 0: none).
func openEngine(dir, backend string, isolate bool, memCap int64) (engine.Engine, error) {
	if isolate && backend != open.CUDA {
		return openIsolated(context.Background(), dir)
	}
	return open.Open(context.Background(), dir, open.Options{Backend: backend, MemoryCap: memCap})
}

// openIsolated opens dir on the CPU backend in a child `proscenium worker`
// (this executable); closing the engine ends the child.
func openIsolated(ctx context.Context, dir string) (engine.Engine, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to start its engine worker: %w", err)
	}
	return gpuworker.OpenIsolated(ctx, exe, gpuworker.Options{Args: []string{"worker"}},
		gpuworker.LoadRequest{Model: dir, Backend: "cpu"}, nil)
}

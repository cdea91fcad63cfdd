package main

import (
	"context"
	"fmt"
	"os"

	"proscenium/engine"
	"proscenium/engine/gpuworker"
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
	return engine.Open(req.Model, engine.Options{})
}

// openEngine opens the checkpoint dir on the CPU backend: in this process, or
// with isolate in a child `proscenium worker`, whose takes are the same bytes.
func openEngine(dir string, isolate bool) (engine.Engine, error) {
	if isolate {
		return openIsolated(context.Background(), dir)
	}
	return engine.Open(dir, engine.Options{})
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

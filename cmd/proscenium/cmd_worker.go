package main

import (
	"context"

	"proscenium/engine"
	"proscenium/engine/gpuworker"
)

// `proscenium worker` is the engine worker for the CPU backend: started by
// the program itself (synth --isolate, serve --isolate, the studio's
// isolate_engine setting), it serves the engine on stdin and stdout with the
// same protocol and serving code as the GPU worker, proscenium-gpu. Not
// listed in the usage: people do not run it.

func init() {
	register(command{name: gpuworker.SelfCommand, hidden: true, summary: "serve the CPU engine on stdin/stdout (started by --isolate)", run: runWorker})
}

func runWorker(args []string) error {
	fs := newFlags(gpuworker.SelfCommand)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	return gpuworker.RunWorker("cpu", openCPU)
}

// openCPU opens dir on the CPU backend in this process.
func openCPU(ctx context.Context, dir string, progress func(done, total int64)) (engine.Engine, error) {
	return engine.Open(dir, engine.Options{})
}

// openEngine opens the checkpoint dir on the CPU backend: in this process, or
// with isolate in a child `proscenium worker`, whose takes are the same bytes.
func openEngine(dir string, isolate bool) (engine.Engine, error) {
	if isolate {
		return gpuworker.OpenInSelf(context.Background(), dir, "cpu", nil)
	}
	return openCPU(context.Background(), dir, nil)
}

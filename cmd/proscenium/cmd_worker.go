package main

import (
	"context"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
	"proscenium/engine/open"
)

// `proscenium worker` is the engine worker for the CPU backend: started by
// the program itself (synth --isolate, serve --isolate, the studio's
// isolate_engine setting), it serves the engine on stdin and stdout with the
// same protocol and serving code as the GPU worker, proscenium-gpu
// (open.ServeWorker). Not listed in the usage: people do not run it.

func init() {
	register(command{name: gpuworker.SelfCommand, hidden: true, summary: "serve the CPU engine on stdin/stdout (started by --isolate)", run: runWorker})
}

func runWorker(args []string) error {
	fs := newFlags(gpuworker.SelfCommand)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	return open.ServeWorker()
}

// openEngine opens the checkpoint dir on the backend --backend names
// (engine/open chooses; cuda runs in proscenium-gpu); isolate runs a CPU
// engine in a child `proscenium worker`, whose takes are the same bytes.
// memCap is the settings' memory cap (the GPU worker's pool cap; 0: none),
// numerics the GPU backbone's numerics policy (--numerics), batch the takes
// it runs together (0: api.DefaultBatch).
func openEngine(dir, backend string, isolate bool, memCap int64, numerics drama3.Numerics, batch int) (api.Engine, error) {
	return open.Open(context.Background(), dir, open.Options{Backend: backend, Isolate: isolate, MemoryCap: memCap, Numerics: numerics, Batch: batch})
}

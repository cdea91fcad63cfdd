package main

import (
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

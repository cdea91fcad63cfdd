package gpuworker

import (
	"context"
	"fmt"
	"os"

	"proscenium/engine/api"
)

// SelfCommand is the first argument that makes this program's own binary
// (the command line, or the studio) an engine worker: its main sees it and
// calls RunWorker. OpenInSelf starts it so.
const SelfCommand = "worker"

// RunWorker is an engine worker's main: it keeps stdout for the protocol
// (ProtocolOutput) and serves engines of backend, opened with open, on stdin
// and stdout until stdin ends.
func RunWorker(backend string, open Opener) error {
	proto, err := ProtocolOutput()
	if err != nil {
		return err
	}
	hello := Hello{PID: os.Getpid(), Backends: []string{backend}}
	return ServeEngine(os.Stdin, proto, hello, func(ctx context.Context, req LoadRequest, progress func(done, total int64)) (api.Engine, error) {
		if req.Backend != backend {
			return nil, fmt.Errorf("backend %q: this worker serves the %s backend (the cuda backend runs in %s)", req.Backend, backend, WorkerName)
		}
		return open(ctx, req, progress)
	})
}

// OpenInSelf loads req in a child process of this program's own binary,
// started with SelfCommand; closing the engine ends the child. Its takes are
// the same bytes as in this process: the same engine makes them.
func OpenInSelf(ctx context.Context, req LoadRequest, progress func(done, total int64)) (api.Engine, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding this program to start its engine worker: %w", err)
	}
	return OpenIsolated(ctx, exe, Options{Args: []string{SelfCommand}}, req, progress)
}

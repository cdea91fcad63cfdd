package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"proscenium/engine/gpuworker"
)

// runWorkerTool runs `proscenium-gpu TOOL args…` (cmd/proscenium-gpu/tools.go)
// with this process's standard streams and returns its failure: GPU
// benchmarks and stage drivers run inside the worker, the only binary that
// links CUDA. worker overrides where the worker is ("" locates it as the
// studio does).
func runWorkerTool(worker, tool string, args []string) error {
	path := worker
	if path == "" {
		p, err := gpuworker.Locate()
		if err != nil {
			return err
		}
		path = p
	}
	cmd := exec.Command(path, append([]string{tool}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("GPU worker %s %s exited with status %d", path, tool, exit.ExitCode())
	}
	if err != nil {
		return fmt.Errorf("GPU worker %s: %w", path, err)
	}
	return nil
}

// workerFlag adds --worker, where the GPU worker binary is ("" locates it
// as the studio does: $PROSCENIUM_GPU_WORKER, next to this program, PATH).
func workerFlag(fs *flag.FlagSet) *string {
	return fs.String("worker", "", "GPU worker binary (default: $"+gpuworker.EnvWorker+", next to this program, or in PATH)")
}

// debugBackend is a debug driver's --backend (cpu, or cuda: the GPU
// worker's tool of the same name and arguments) and --worker.
type debugBackend struct {
	fs              *flag.FlagSet
	tool            string
	backend, worker *string
}

// debugBackendFlags adds --backend and --worker to fs for a driver whose
// GPU side is the worker's tool.
func debugBackendFlags(fs *flag.FlagSet, tool string) *debugBackend {
	return &debugBackend{fs: fs, tool: tool,
		backend: fs.String("backend", "cpu", "cpu, or cuda: the GPU worker's "+tool+" with the same arguments"),
		worker:  workerFlag(fs)}
}

// forward, once fs is parsed, runs the driver in the worker when --backend
// is cuda, with every flag given but --backend and --worker: done reports
// that it ran there (err is its failure). A backend other than cpu or cuda
// is a usage error.
func (b *debugBackend) forward() (done bool, err error) {
	switch *b.backend {
	case "cpu":
		return false, nil
	case "cuda":
		var fwd []string
		b.fs.Visit(func(f *flag.Flag) {
			if f.Name != "backend" && f.Name != "worker" {
				fwd = append(fwd, "-"+f.Name+"="+f.Value.String())
			}
		})
		return true, runWorkerTool(*b.worker, b.tool, fwd)
	}
	return true, fmt.Errorf("%w: --backend %q: cpu or cuda", errUsage, *b.backend)
}

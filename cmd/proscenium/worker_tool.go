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

// forwardedFlags is every flag given on fs but --backend and --worker, as
// arguments for the worker's tool of the same command.
func forwardedFlags(fs *flag.FlagSet) []string {
	var fwd []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name != "backend" && f.Name != "worker" {
			fwd = append(fwd, "-"+f.Name+"="+f.Value.String())
		}
	})
	return fwd
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"proscenium/engine/gpuworker"
)

// `proscenium gpu probe` starts the GPU worker (a separate process, so this
// command runs on machines without a GPU) and prints what it found, or why
// the GPU backend is unavailable.

func init() {
	register(command{name: "gpu", summary: "GPU backend: `gpu probe` starts the worker and reports the device or why it is unavailable", run: runGPU})
}

func runGPU(args []string) error {
	if len(args) == 0 || args[0] != "probe" {
		return fmt.Errorf("%w: proscenium gpu probe [-worker PATH] [-json]", errUsage)
	}
	fs := newFlags("gpu probe")
	worker := fs.String("worker", "", "worker binary (default: $"+gpuworker.EnvWorker+", next to this program, or in PATH)")
	asJSON := fs.Bool("json", false, "print the worker's report as JSON")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for the worker to open the device")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("%w: gpu probe takes no arguments", errUsage)
	}
	path := *worker
	if path == "" {
		p, err := gpuworker.Locate()
		if err != nil {
			return err
		}
		path = p
	}
	ctx := context.Background()
	c, err := gpuworker.Start(ctx, path, gpuworker.Options{HelloTimeout: *timeout})
	if err != nil {
		return err
	}
	defer c.Close()
	h := c.Hello()
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Hello gpuworker.Hello `json:"hello"`
		}{h})
	}
	fmt.Printf("GPU backend available (worker %s, pid %d)\n", path, h.PID)
	fmt.Printf("device: %s\n", h.Device)
	fmt.Printf("kernel build: %s\n", h.Device.KernelBuild)
	if len(h.Backends) == 0 {
		fmt.Println("backends: none (no CUDA Drama 3 pipeline in this worker yet: takes run on the CPU)")
	} else {
		fmt.Printf("backends: %s\n", strings.Join(h.Backends, ", "))
	}
	return nil
}

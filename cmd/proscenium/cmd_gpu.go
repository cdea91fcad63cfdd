package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"proscenium/engine/gpuworker"
	"proscenium/engine/open"
)

// `proscenium gpu probe` starts the GPU worker (a separate process, so this
// command runs on machines without a GPU) and prints what it found, or why
// the GPU backend is unavailable.

var gpuCommands = map[string]command{}

func init() {
	register(command{name: "gpu", summary: "GPU backend: `gpu probe` starts the worker and reports the device or why it is unavailable", run: func(args []string) error {
		return dispatch("proscenium gpu probe [flags]", "gpu subcommand", gpuCommands, args)
	}})
	add(gpuCommands, command{name: "probe", summary: "start the GPU worker and report the device, or why the GPU backend is unavailable", run: func(args []string) error {
		return runGPUProbe(args, os.Stdout)
	}})
}

// probeReport is what `gpu probe --json` prints, on success and on failure.
type probeReport struct {
	Available bool             `json:"available"`
	Worker    string           `json:"worker,omitempty"`
	Error     string           `json:"error,omitempty"` // why the GPU backend is unavailable
	Hello     *gpuworker.Hello `json:"hello,omitempty"`
	// Tier is the memory tier --model would get on this device now
	// (open.GPUTierOn), or why it would be refused.
	Tier string `json:"tier,omitempty"`
}

func runGPUProbe(args []string, out io.Writer) error {
	fs := newFlags("gpu probe")
	worker := workerFlag(fs)
	asJSON := fs.Bool("json", false, "print the report as JSON, also when the GPU backend is unavailable (exit status 1 then)")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for the worker to open the device")
	model := fs.String("model", "", "checkpoint directory: also say where its weights would live on this device (the memory tier)")
	memCap := memoryCapFlag(fs)
	voiceCache := voiceCacheFlag(fs)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	dir := ""
	if *model != "" {
		var err error
		if dir, err = resolveModel(*model); err != nil {
			return err
		}
	}
	rep, err := probeGPU(*worker, *timeout)
	if err == nil && dir != "" {
		if tier, terr := open.GPUTierOn(dir, rep.Hello.Device.FreeMem, open.Options{MemoryCap: memCap.or(0), VoiceCacheBytes: voiceCache.or(0)}); terr != nil {
			rep.Tier = "refused: " + terr.Error()
		} else {
			rep.Tier = tier
		}
	}
	if *asJSON {
		if err != nil {
			rep.Error = err.Error()
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if encErr := enc.Encode(rep); encErr != nil {
			return encErr
		}
		return err
	}
	if err != nil {
		return err
	}
	h := rep.Hello
	fmt.Fprintf(out, "GPU backend available (worker %s, pid %d)\n", rep.Worker, h.PID)
	fmt.Fprintf(out, "device: %s\n", h.Device)
	fmt.Fprintf(out, "kernel build: %s\n", h.Device.KernelBuild)
	if len(h.Backends) == 0 {
		fmt.Fprintln(out, "backends: none (this worker serves no Drama 3 backend: takes run on the CPU)")
	} else {
		fmt.Fprintf(out, "backends: %s\n", strings.Join(h.Backends, ", "))
	}
	fmt.Fprintf(out, "device memory: %d bytes free of %d\n", h.Device.FreeMem, h.Device.TotalMem)
	if rep.Tier != "" {
		fmt.Fprintf(out, "memory tier of %s (the codec not counted): %s\n", dir, rep.Tier)
	}
	return nil
}

// probeGPU starts the worker at path (found when "") and reads its hello
// (the device, its free memory, the backends it serves).
func probeGPU(path string, timeout time.Duration) (probeReport, error) {
	rep := probeReport{Worker: path}
	if path == "" {
		p, err := gpuworker.Locate()
		if err != nil {
			return rep, err
		}
		rep.Worker = p
	}
	ctx := context.Background()
	c, err := gpuworker.Start(ctx, rep.Worker, gpuworker.Options{HelloTimeout: timeout})
	if err != nil {
		return rep, err
	}
	defer c.Close()
	h := c.Hello()
	rep.Available, rep.Hello = true, &h
	return rep, nil
}

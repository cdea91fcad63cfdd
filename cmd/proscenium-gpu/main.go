//go:build cuda

// Command proscenium-gpu is the GPU worker: it opens the CUDA device, loads
// the kernels for its architecture and serves the gpuworker protocol on stdin
// and stdout for the studio and the command line, which start it as a child
// process (engine/gpuworker). With -probe it prints what it found and exits;
// with a tool's name first (tools.go; `proscenium-gpu tools` lists them) it
// runs that tool (a benchmark or stage driver) instead.
//
// It is built only with the cuda tag (make gpu-worker): gorgonia.org/cu ends
// the process in its init when there is no GPU, printing why on stdout, which
// the client shows as the reason the GPU backend is unavailable.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/gpuworker"
)

func main() {
	if ok, code := runTool(os.Args[1:]); ok {
		os.Exit(code)
	}
	probe := flag.Bool("probe", false, "print the device report as JSON and exit")
	ordinal := flag.Int("device", 0, "CUDA device ordinal")
	deviceCap := flag.Int64("cap", 0, "device memory cap in bytes (0: none)")
	pinnedCap := flag.Int64("pinned-cap", 1<<30, "pinned host memory cap in bytes (0: none)")
	flag.Parse()

	// The protocol needs stdout to itself; C code that prints would corrupt
	// it, so file descriptor 1 now points at stderr.
	proto, err := gpuworker.ProtocolOutput()
	if err != nil {
		fmt.Println("proscenium-gpu:", err)
		os.Exit(1)
	}
	dev, err := cuda.Open(*ordinal, *deviceCap, *pinnedCap)
	if err != nil {
		fmt.Fprintln(proto, err) // before the magic: the client's reason
		os.Exit(1)
	}
	defer dev.Close()
	hello, err := helloOf(dev)
	if err != nil {
		fmt.Fprintln(proto, err)
		os.Exit(1)
	}
	if *probe {
		b, _ := json.MarshalIndent(hello, "", "  ")
		fmt.Fprintf(proto, "%s\n%s\n", hello.Device, b)
		return
	}
	if err := gpuworker.ServeEngine(os.Stdin, proto, hello, opener(dev)); err != nil {
		fmt.Fprintln(os.Stderr, "proscenium-gpu:", err)
		os.Exit(1)
	}
}

func helloOf(dev *cuda.Device) (gpuworker.Hello, error) {
	free, _, err := dev.MemInfo()
	if err != nil {
		return gpuworker.Hello{}, err
	}
	in := dev.Info
	device := gpuworker.Device{
		Name: in.Name, Ordinal: in.Ordinal, CCMajor: in.Major, CCMinor: in.Minor, Multiprocs: in.Multiprocs,
		L2Bytes: in.L2Bytes, TotalMem: in.TotalMem, FreeMem: free, DriverVersion: in.DriverVersion,
		Kernels: in.Kernels, KernelBuild: in.KernelBuild,
	}
	return gpuworker.Hello{Protocol: gpuworker.ProtocolVersion, PID: os.Getpid(), Device: device, Backends: []string{"cuda"}}, nil
}

// opener opens models on dev for ServeEngine: the CUDA frame backend under
// the take engine (engine/take), as engine/open does for the CPU.
func opener(dev *cuda.Device) gpuworker.Opener {
	return func(ctx context.Context, req gpuworker.LoadRequest, progress func(done, total int64)) (api.Engine, error) {
		if req.Backend != "cuda" {
			return nil, fmt.Errorf("backend %q: proscenium-gpu serves the cuda backend (the CPU backend runs in `proscenium worker`)", req.Backend)
		}
		if err := req.Check(); err != nil {
			return nil, err
		}
		numerics, _ := drama3.ParseNumerics(req.Numerics) // Check parsed it
		if req.MemoryCap > 0 {
			dev.Pool.SetCap(cuda.DeviceMem, req.MemoryCap)
		}
		dev.Numerics = numerics
		reason := "worker: " + dev.Info.Name
		if req.Reason != "" {
			reason = req.Reason + " (" + reason + ")"
		}
		return openCUDAEngine(ctx, dev, req, reason, progress)
	}
}

package main

import (
	"fmt"
)

func init() {
	registerBench(command{name: "codec", summary: "GPU codec at the S2 geometry with random weights: ms per frame streaming, first frame, whole decode (--synthetic s2 [--json])", run: runBenchCodec})
}

// runBenchCodec forwards to the GPU worker's bench-codec tool
// (cmd/proscenium-gpu/codec_tools.go), which prints the table or JSON.
func runBenchCodec(args []string) error {
	fs := newFlags("bench codec")
	synthetic := fs.String("synthetic", "", "geometry with random weights: s2 (required)")
	frames := fs.Int("frames", 512, "frames per take")
	repeats := fs.Int("repeats", 5, "runs per figure (the median is reported)")
	asJSON := fs.Bool("json", false, "print JSON")
	device := fs.Int("device", 0, "CUDA device ordinal")
	worker := workerFlag(fs)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *synthetic != "s2" {
		return fmt.Errorf("%w: --synthetic s2 is required (the only geometry)", errUsage)
	}
	if *frames < 1 || *repeats < 1 {
		return fmt.Errorf("%w: --frames %d and --repeats %d must be positive", errUsage, *frames, *repeats)
	}
	fwd := []string{"-synthetic", *synthetic, fmt.Sprintf("-frames=%d", *frames), fmt.Sprintf("-repeats=%d", *repeats),
		fmt.Sprintf("-device=%d", *device)}
	if *asJSON {
		fwd = append(fwd, "-json")
	}
	return runWorkerTool(*worker, "bench-codec", fwd)
}

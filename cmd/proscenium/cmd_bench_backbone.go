package main

import (
	"fmt"
	"strconv"

	"proscenium/engine/drama3"
)

func init() {
	registerBench(command{name: "backbone", summary: "GPU backbone: decode step and prefill at the full geometry (--synthetic full [--json]); runs in the GPU worker", run: runBenchBackbone})
}

// runBenchBackbone forwards to the worker's bench-backbone tool
// (cmd/proscenium-gpu/tool_bench_backbone.go), which prints the table or JSON.
func runBenchBackbone(args []string) error {
	fs := newFlags("bench backbone")
	worker := workerFlag(fs)
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	synthetic := fs.String("synthetic", "full", "geometry of the random weights made on the device: full (Qwen3.5-35B-A3B shape)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	context := fs.Int("context", 2048, "context limit in rows")
	prefill := fs.Int("prefill", 60, "rows of the timed prefill")
	steps := fs.Int("steps", 100, "timed decode steps")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *synthetic != "full" {
		return fmt.Errorf("%w: --synthetic %q: the only geometry is full", errUsage, *synthetic)
	}
	fwd := []string{"--synthetic", *synthetic, "--context", strconv.Itoa(*context), "--prefill", strconv.Itoa(*prefill), "--steps", strconv.Itoa(*steps)}
	if *asJSON {
		fwd = append(fwd, "--json")
	}
	fwd = append(fwd, "-numerics", numerics.String())
	return runWorkerTool(*worker, "bench-backbone", fwd)
}

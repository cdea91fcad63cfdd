package main

import (
	"fmt"
	"strconv"
	"strings"

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
	rows := fs.String("rows", "", "only the decode step of several takes at once: widths B, comma-separated, 1…8 (e.g. 1,2,4,8)")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *rows != "" {
		if err := checkStepWidths(*rows); err != nil {
			return fmt.Errorf("%w: --rows %q: %v", errUsage, *rows, err)
		}
	}
	if *synthetic != "full" {
		return fmt.Errorf("%w: --synthetic %q: the only geometry is full", errUsage, *synthetic)
	}
	fwd := []string{"--synthetic", *synthetic, "--context", strconv.Itoa(*context), "--prefill", strconv.Itoa(*prefill), "--steps", strconv.Itoa(*steps)}
	if *asJSON {
		fwd = append(fwd, "--json")
	}
	if *rows != "" {
		fwd = append(fwd, "--rows", *rows)
	}
	fwd = append(fwd, "-numerics", numerics.String())
	return runWorkerTool(*worker, "bench-backbone", fwd)
}

// maxStepWidth is the most takes one decode step takes (engine/cuda
// MaxStepRows; the worker's tool checks the same).
const maxStepWidth = 8

// checkStepWidths checks a --rows list: comma-separated widths 1…maxStepWidth.
func checkStepWidths(s string) error {
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > maxStepWidth {
			return fmt.Errorf("%q is not a width from 1 to %d", f, maxStepWidth)
		}
	}
	return nil
}

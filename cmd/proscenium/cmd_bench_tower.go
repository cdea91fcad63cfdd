package main

import (
	"fmt"

	"proscenium/engine/drama3"
)

// `proscenium bench tower --synthetic full [--json]`: the device tower,
// heads and draws per frame on synthetic weights, run inside the GPU worker
// (`proscenium-gpu bench-tower`, which takes the same flags).

func init() {
	registerBench(command{name: "tower", summary: "GPU tower + heads + draws per frame on synthetic weights (--synthetic full|demo, --json)", run: runBenchTower})
}

func runBenchTower(args []string) error {
	fs := newFlags("bench tower")
	worker := workerFlag(fs)
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	synthetic := fs.String("synthetic", "full", "geometry of the synthetic weights: full (docs/MODEL.md's assumed tower) or demo")
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	prefill := fs.Int("prefill", 60, "text rows prefilled before the frames")
	frames := fs.Int("frames", 200, "frames timed per figure")
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if *synthetic != "full" && *synthetic != "demo" {
		return fmt.Errorf("%w: --synthetic %q: want full or demo", errUsage, *synthetic)
	}
	if *prefill < 1 || *frames < 1 {
		return fmt.Errorf("%w: --prefill %d and --frames %d must be at least 1", errUsage, *prefill, *frames)
	}
	fwd := []string{"-synthetic", *synthetic, fmt.Sprintf("-prefill=%d", *prefill), fmt.Sprintf("-frames=%d", *frames)}
	if *asJSON {
		fwd = append(fwd, "-json")
	}
	fwd = append(fwd, "-numerics", numerics.String())
	return runWorkerTool(*worker, "bench-tower", fwd)
}

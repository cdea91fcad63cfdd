package main

import (
	"fmt"

	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

// `proscenium bench take --synthetic full | --model DIR [--batch 1,2,4,8]
// [--json]`: whole takes on the GPU through the take loop (load, prefill,
// time to first audio, per-stage ms per frame, real-time factor, peak
// memory, the memory tier; with --ref-seconds S a reference voice's prefill
// and first audio uncached and from the voice cache; with --batch, B takes
// together: each take's first audio and real-time factor and the audio
// seconds made per second), run inside the GPU worker (`proscenium-gpu
// bench-take`, which takes the same flags; --memory-cap goes to it as -cap
// in bytes).

func init() {
	registerBench(command{name: "take", summary: "whole GPU takes: load, prefill, first audio, ms per frame by stage, real-time factor (--synthetic full | --model DIR, --json)", run: runBenchTake})
}

func runBenchTake(args []string) error {
	fs := newFlags("bench take")
	worker := workerFlag(fs)
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	synthetic := fs.String("synthetic", "", "full: random weights at the full geometry made on the device (no file)")
	model := fs.String("model", "", "checkpoint directory (instead of --synthetic)")
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	prompt := fs.Int("prompt", 60, "prompt tokens (synthetic)")
	frames := fs.Int("frames", 200, "frames per take at most")
	takes := fs.Int("takes", 3, "takes (the first warms up; the last is reported)")
	batch := fs.String("batch", "", "takes together, a comma-separated list (1,2,4,8): each B's takes' first audio and real-time factor, and audio seconds per second")
	refSeconds := fs.Float64("ref-seconds", 0, "a reference voice of this many seconds (random codes at the full geometry): a warm-up take in another voice, then prefill and first audio uncached and from the voice cache, with the rows prefilled")
	memCap := memoryCapFlag(fs)
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if (*synthetic == "") == (*model == "") {
		return fmt.Errorf("%w: give --synthetic full or --model DIR", errUsage)
	}
	if *synthetic != "" && *synthetic != "full" {
		return fmt.Errorf("%w: --synthetic %q: want full", errUsage, *synthetic)
	}
	if *prompt < 2 || *frames < 1 || *takes < 1 {
		return fmt.Errorf("%w: --prompt %d (at least 2), --frames %d and --takes %d (at least 1)", errUsage, *prompt, *frames, *takes)
	}
	if *refSeconds < 0 || *refSeconds > 120 {
		return fmt.Errorf("%w: --ref-seconds %g: in [0, 120]", errUsage, *refSeconds)
	}
	fwd := []string{fmt.Sprintf("-prompt=%d", *prompt), fmt.Sprintf("-frames=%d", *frames), fmt.Sprintf("-takes=%d", *takes)}
	if *refSeconds > 0 {
		fwd = append(fwd, fmt.Sprintf("-ref-seconds=%g", *refSeconds))
	}
	if *synthetic != "" {
		fwd = append(fwd, "-synthetic", *synthetic)
	} else {
		fwd = append(fwd, "-model", *model)
	}
	if *asJSON {
		fwd = append(fwd, "-json")
	}
	if c := memCap.or(0); c > 0 {
		fwd = append(fwd, fmt.Sprintf("-cap=%d", c))
	}
	fwd = append(fwd, "-numerics", numerics.String())
	if *batch != "" {
		if _, err := api.ParseBatches(*batch); err != nil {
			return fmt.Errorf("%w: %w", errUsage, err)
		}
		fwd = append(fwd, "-batch", *batch)
	}
	return runWorkerTool(*worker, "bench-take", fwd)
}

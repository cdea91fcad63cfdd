package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"time"

	"proscenium/engine/demo/qwen3"
	"proscenium/engine/drama3"
)

func init() {
	register(command{name: "make-tiny", summary: "write a random-weights demo checkpoint in the full Drama 3 layout", run: func(args []string) error {
		return runMakeTiny(args, os.Stdout)
	}})
}

// runMakeTiny: proscenium make-tiny DIR [--seed N] [--tokenizer FILE] [--fused-experts].
func runMakeTiny(args []string, out io.Writer) error {
	fs := newFlags("make-tiny")
	seed := fs.Uint64("seed", 1, "random seed: the same seed writes the same bytes")
	tok := fs.String("tokenizer", "", "base Qwen tokenizer.json (default: the Qwen3 tokenizer built into this program)")
	fused := fs.Bool("fused-experts", false, "write fused 3-D experts (mlp.experts.gate_up_proj, down_proj) instead of one tensor per expert")
	geometry := fs.String("geometry", "demo", "demo (the demo model's sizes), odd (odd sizes everywhere: the backends' comparison geometry) or full (the real model's geometry, about 36 GB: speed work)")
	force := fs.Bool("force", false, "write into DIR even when it is not empty (its checkpoint files are replaced)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: proscenium make-tiny DIR [--seed N] [--tokenizer FILE] [--fused-experts] [--geometry demo|odd|full] [--force]")
		fs.PrintDefaults()
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: make-tiny takes one directory, got %d arguments", errUsage, len(pos))
	}
	dir := pos[0]
	// A real checkpoint in DIR would be replaced by random weights.
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 && !*force {
		return fmt.Errorf("%s is not empty (%d entries, e.g. %s): make-tiny would replace its files; give an empty or new directory, or --force", dir, len(entries), entries[0].Name())
	} else if err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("make-tiny: %w", err)
	}
	var base []byte
	if *tok == "" {
		base, err = qwen3.TokenizerJSON()
	} else if base, err = os.ReadFile(*tok); err != nil {
		err = fmt.Errorf("base tokenizer: %w", err)
	}
	if err != nil {
		return err
	}
	var cfg *drama3.Config
	switch *geometry {
	case "demo":
	case "odd":
		cfg = drama3.TinyOddConfig()
	case "full":
		start := time.Now()
		if err := drama3.WriteFull(dir, drama3.FullOptions{Seed: *seed, BaseTokenizer: base}); err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote a full-geometry checkpoint (random weights, speaks no words; fused FP8 experts) to %s in %.1f s\n", dir, time.Since(start).Seconds())
		return nil
	default:
		return fmt.Errorf("%w: --geometry %q: want demo, odd or full", errUsage, *geometry)
	}
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: *seed, BaseTokenizer: base, FusedExperts: *fused, Config: cfg}); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote a demo checkpoint (random weights, speaks no words) to %s\n", dir)
	return nil
}

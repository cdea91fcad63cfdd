//go:build cuda

package main

import (
	"flag"
	"fmt"
	"os"

	"proscenium/engine/drama3"
)

// `proscenium-gpu make-tiny DIR` writes a demo checkpoint (as `proscenium
// make-tiny`), so that the GPU machine needs no second binary, and its
// audio libraries, to make the checkpoints the comparisons run on.

func init() {
	registerTool(tool{name: "make-tiny", summary: "write a demo checkpoint (--geometry demo|odd, --tokenizer base tokenizer.json)", run: makeTiny})
}

func makeTiny(args []string) error {
	fs := flag.NewFlagSet("make-tiny", flag.ContinueOnError)
	geometry := fs.String("geometry", "demo", "demo or odd")
	tok := fs.String("tokenizer", "", "base Qwen tokenizer.json (required)")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *tok == "" {
		return fmt.Errorf("usage: make-tiny DIR --tokenizer FILE [--geometry demo|odd] [--seed N]")
	}
	var cfg *drama3.Config
	switch *geometry {
	case "demo":
	case "odd":
		cfg = drama3.TinyOddConfig()
	default:
		return fmt.Errorf("--geometry %q: want demo or odd", *geometry)
	}
	base, err := os.ReadFile(*tok)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(fs.Arg(0), 0o755); err != nil {
		return err
	}
	return drama3.WriteTiny(fs.Arg(0), drama3.TinyOptions{Seed: *seed, BaseTokenizer: base, Config: cfg})
}

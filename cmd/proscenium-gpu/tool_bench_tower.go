//go:build cuda

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// bench-tower: the device tower, heads and draws per frame on synthetic
// weights (benchTower, bench_tower.go); `proscenium bench tower` forwards here.

func init() {
	registerTool(tool{name: "bench-tower", summary: "tower + heads + draws per frame on synthetic weights", run: runBenchTower})
}

func runBenchTower(args []string) error {
	fs := flag.NewFlagSet("proscenium-gpu bench-tower", flag.ContinueOnError)
	synthetic := fs.String("synthetic", "full", "geometry: full (docs/MODEL.md's assumed tower) or demo (make-tiny's)")
	asJSON := fs.Bool("json", false, "print the figures as JSON")
	prefill := fs.Int("prefill", 60, "text rows prefilled before the frames")
	frames := fs.Int("frames", 200, "frames timed per figure")
	ordinal := fs.Int("device", 0, "CUDA device ordinal")
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	gemvxList := fs.String("gemvx", "", "with -rows: the B-row GEMV instances to time, comma-separated (t128r2u2,t128r4u1); empty: the one-row choice")
	rowsList := fs.String("rows", "", "takes together, comma-separated (1,2,4,8): only the frame of that many takes at once (Tower.FrameRows)")
	profile := fs.Bool("profile-frame", false, "stop after the first figure and replay one frame graph inside a profiler range, for ncu --profile-from-start off")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var cfg drama3.AudioConfig
	switch *synthetic {
	case "full":
		cfg = fullTowerConfig()
	case "demo":
		cfg = drama3.TinyConfig().Audio
	default:
		return fmt.Errorf("-synthetic %q: want full or demo", *synthetic)
	}
	if *prefill < 1 || *frames < 1 {
		return fmt.Errorf("-prefill %d and -frames %d must be at least 1", *prefill, *frames)
	}
	dev, err := cuda.Open(*ordinal, 0, 0)
	if err != nil {
		return err
	}
	dev.Numerics = numerics
	defer dev.Close()
	if *rowsList != "" {
		rows, err := api.ParseBatches(*rowsList)
		if err != nil {
			return err
		}
		res, err := benchTowerRows(dev, cfg, *prefill, *frames, rows, strings.Split(*gemvxList, ","))
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		}
		fmt.Printf("device: %s\nnumerics: %s\ngeometry: %s\nweights read per frame pass: %.1f MiB\nsettings: %s; %d cache rows per take; %d frames per figure\n",
			res.Device, numerics, res.Geometry, float64(res.WeightBytes)/(1<<20), res.Settings, res.PrefillRows, res.Frames)
		for _, r := range res.Rows {
			fmt.Printf("takes %d, gemvx %s: frame %.3f ms (%.3f ms a take), %.0f GB/s of weights, %d launches\n", r.Takes, r.Gemvx, r.FrameMs, r.PerTakeMs, r.GBps, r.Launches)
		}
		return nil
	}
	res, err := benchTower(dev, cfg, *prefill, *frames, *profile)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Printf("device: %s\nnumerics: %s (the semantic head's GEMV; the tower sums float32 under either)\ngeometry: %s\nweights read per frame: %.1f MiB\n", res.Device, numerics, res.Geometry, float64(res.WeightBytes)/(1<<20))
	fmt.Printf("prefill %d text rows: %.2f ms\n", res.PrefillRows, res.PrefillMs)
	fmt.Printf("frame (%s), %d frames: graph %.3f ms (%.0f GB/s of weights), launches %.3f ms\n",
		res.Settings, res.Frames, res.GraphMs, res.GBps, res.LaunchMs)
	fmt.Printf("frame, top_p 1 top_k 0 (full sorts): graph %.3f ms; greedy: graph %.3f ms\n", res.GraphFullMs, res.GraphGreedMs)
	fmt.Printf("frame after %d cache rows (first settings): graph %.3f ms\n", res.LongRows, res.GraphLongMs)
	fmt.Printf("the frame's projections alone: %.3f ms\n", res.ProjMs)
	fmt.Printf("one draw: %.1f µs over 4097 logits, %.1f µs over 1024\n", res.Sample4097Us, res.Sample1024Us)
	fmt.Printf("frame graph with every projection on one GEMV instance:")
	for _, v := range res.ByGemv {
		fmt.Printf(" %s %.3f ms;", v.Variant, v.Ms)
	}
	fmt.Println()
	fmt.Printf("launch sequence of the figures above: %s\n", res.Fusion)
	for _, f := range res.ByFusion {
		fmt.Printf("frame graph, sequence %s (pass %d): %.3f ms, greedy %.3f ms\n", f.Fusion, f.Pass, f.Ms, f.GreedyMs)
	}
	return nil
}

//go:build cuda

package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"text/tabwriter"

	"proscenium/engine/api"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// bench-groups: several takes' frames as G groups stepping side by side on
// streams of their own, against the same takes in one batch. A frame of
// takes/G takes is one launch chain (the B-row backbone step, then the
// B-row tower); one chain at a time leaves most of the GPU idle between its
// dependent launches, so G chains may overlap where one batch cannot.
// Synthetic full-geometry weights, one copy shared by every group; each
// group its own backbone and tower state (Backbone.Sibling).

func init() {
	registerTool(tool{name: "bench-groups", summary: "frames of several takes as groups on streams of their own, against one batch (synthetic full geometry)", run: benchGroups})
}

// groupsFigure is the frame of every take with the takes in Groups groups.
type groupsFigure struct {
	Groups     int     `json:"groups"`
	TakesEach  int     `json:"takes_per_group"`
	SideBySide float64 `json:"frame_ms_side_by_side"` // every group's chain on its own stream, started together
	InTurn     float64 `json:"frame_ms_in_turn"`      // the same chains one after another on one stream
	StepsSide  float64 `json:"steps_ms_side_by_side"` // only the backbone steps, side by side
	Launches   int     `json:"launches_per_group"`    // kernels in one group's step and tower graphs
}

func benchGroups(args []string) error {
	fs := flag.NewFlagSet("proscenium-gpu bench-groups", flag.ContinueOnError)
	takes := fs.Int("takes", 4, "takes in all (1…8)")
	groupsList := fs.String("groups", "1,2", "comma-separated group counts, each dividing -takes")
	prefill := fs.Int("prefill", 60, "prompt rows of each take (backbone and tower)")
	frames := fs.Int("frames", 50, "frames timed per figure")
	ordinal := fs.Int("device", 0, "CUDA device ordinal")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	var numerics drama3.Numerics
	fs.Var(&numerics, "numerics", drama3.NumericsUsage)
	if err := fs.Parse(args); err != nil {
		return err
	}
	groups, err := api.ParseBatches(*groupsList)
	if err != nil {
		return fmt.Errorf("-groups: %w", err)
	}
	if *takes < 1 || *takes > cuda.MaxStepRows || *takes > cuda.TowerMaxTakes {
		return fmt.Errorf("-takes %d: 1…%d", *takes, min(cuda.MaxStepRows, cuda.TowerMaxTakes))
	}
	for _, g := range groups {
		if *takes%g != 0 {
			return fmt.Errorf("-groups %d does not divide -takes %d", g, *takes)
		}
	}
	if *prefill < 1 || *frames < 1 {
		return fmt.Errorf("-prefill %d and -frames %d must be at least 1", *prefill, *frames)
	}
	cfg, err := drama3.ParseConfig(fullGeometry)
	if err != nil {
		return err
	}
	d, err := cuda.Open(*ordinal, 0, 0)
	if err != nil {
		return err
	}
	d.Numerics = numerics
	defer d.Close()

	// Each timing replays frames steps after the prompt and three steps.
	context := *prefill + 3 + *frames + 8
	most := slices.Max(groups)
	bbs := make([]*cuda.Backbone, most)
	if bbs[0], err = syntheticBackboneSlots(d, cfg, context, *takes, 1, nil); err != nil {
		return err
	}
	defer func() {
		for i := len(bbs) - 1; i >= 0; i-- {
			if bbs[i] != nil {
				bbs[i].Close()
			}
		}
	}()
	for i := 1; i < most; i++ {
		if bbs[i], err = bbs[0].Sibling(); err != nil {
			return err
		}
	}
	st, err := newSyntheticTower(d, fullTowerConfig())
	if err != nil {
		return err
	}
	defer st.free(d)
	D := int64(st.g.Dim)
	towers := make([]*cuda.Tower, most)
	defer func() {
		for _, tw := range towers {
			if tw != nil {
				tw.Close()
			}
		}
	}()
	hidden, err := d.Alloc(int64(*takes) * D * 4)
	if err != nil {
		return err
	}
	defer d.Free(hidden)
	if err := fillHidden(d, hidden, int64(*takes)*D, 999); err != nil {
		return err
	}
	for i := range towers {
		if towers[i], err = cuda.NewTower(d, &st.w, cuda.TowerOptions{MaxRows: context + 1, Takes: *takes}); err != nil {
			return err
		}
	}

	r := rand.New(rand.NewPCG(5, 6))
	vocab := cfg.Text.VocabSize
	token := func() cuda.BackboneRow { return cuda.BackboneRow{Token: r.IntN(vocab)} }
	sampled := sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}
	var towerGraphs []*cuda.Graph
	defer func() {
		d.Run(func(*cuda.Queue) error {
			for _, g := range towerGraphs {
				g.Destroy()
			}
			return nil
		})
	}()
	// chains readies g groups of n takes each: fresh prompts, three steps
	// (the step graph captured), the towers' slots begun, and returns each
	// group's step and tower graphs, to be replayed frames times.
	chains := func(g, n int) ([][]*cuda.Graph, error) {
		out := make([][]*cuda.Graph, g)
		for i := 0; i < g; i++ {
			b := bbs[i]
			if err := b.Reset(); err != nil {
				return nil, err
			}
			slots := make([]int, n)
			for s := range slots {
				slots[s] = n - 1 - s // rows in another order than the slots
				rows := make([]cuda.BackboneRow, *prefill)
				for j := range rows {
					rows[j] = token()
				}
				if err := b.UseSlot(s); err != nil {
					return nil, err
				}
				if _, err := b.Prefill(rows); err != nil {
					return nil, err
				}
			}
			for range 3 {
				rows := make([]cuda.BackboneRow, n)
				for j := range rows {
					rows[j] = token()
				}
				if _, err := b.StepRows(rows, slots); err != nil {
					return nil, err
				}
			}
			step, err := b.StepRowsReplay(*frames)
			if err != nil {
				return nil, err
			}
			tw := towers[i]
			for s := 0; s < n; s++ {
				if err := tw.Slot(s).BeginAt(sampled, uint64(i*n+s+1), *prefill); err != nil {
					return nil, err
				}
			}
			var frame *cuda.Graph
			if err := d.Run(func(q *cuda.Queue) (err error) {
				frame, err = q.Capture(func(q *cuda.Queue) error { return tw.FrameRows(q, cuda.Whole(hidden), n, cuda.Tensor{}) })
				return err
			}); err != nil {
				return nil, err
			}
			towerGraphs = append(towerGraphs, frame)
			out[i] = []*cuda.Graph{step, frame}
		}
		return out, nil
	}
	var figs []groupsFigure
	for _, g := range groups {
		n := *takes / g
		f := groupsFigure{Groups: g, TakesEach: n}
		c, err := chains(g, n)
		if err != nil {
			return fmt.Errorf("%d groups: %w", g, err)
		}
		f.Launches = c[0][0].Kernels() + c[0][1].Kernels()
		if f.SideBySide, err = d.TimeChains(c, *frames); err != nil {
			return err
		}
		if c, err = chains(g, n); err != nil {
			return err
		}
		if f.InTurn, err = d.TimeChains([][]*cuda.Graph{slices.Concat(c...)}, *frames); err != nil {
			return err
		}
		if c, err = chains(g, n); err != nil {
			return err
		}
		steps := make([][]*cuda.Graph, g)
		for i := range c {
			steps[i] = c[i][:1]
		}
		if f.StepsSide, err = d.TimeChains(steps, *frames); err != nil {
			return err
		}
		figs = append(figs, f)
	}
	if *asJSON {
		return printJSON(figs)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "%s (numerics %s): %d takes, %d-row prompts, %d frames a figure\n", d.Info.Name, d.Numerics, *takes, *prefill, *frames)
	fmt.Fprintln(w, "groups\ttakes each\tframe, side by side\tframe, in turn\tsteps only, side by side\tlaunches a group")
	for _, f := range figs {
		fmt.Fprintf(w, "%d\t%d\t%.3f ms\t%.3f ms\t%.3f ms\t%d\n", f.Groups, f.TakesEach, f.SideBySide, f.InTurn, f.StepsSide, f.Launches)
	}
	return w.Flush()
}

//go:build cuda

package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// bench-backbone -rows: the B-row decode step (cuda.Backbone.StepRows) of B
// takes at once, each after its own prefill, against the one-take step of
// the same run.

// rowsReport is bench-backbone -rows' output.
type rowsReport struct {
	Device      string      `json:"device"`
	Numerics    string      `json:"numerics"`
	Context     int         `json:"context_rows"`
	PrefillRows int         `json:"prefill_rows"` // each take's prompt before its steps
	CopyGBs     float64     `json:"copy_gb_per_s"`
	OneTakeMS   float64     `json:"one_take_step_device_ms"` // Backbone.Step of one take, same backbone
	Widths      []rowsBench `json:"widths"`
}

// rowsBench is one B's figures.
type rowsBench struct {
	Rows      int     `json:"rows"`
	Experts   string  `json:"experts"`        // how the routed experts ran
	WallMS    float64 `json:"step_ms"`        // wall time per StepRows: rows in, graph, rows out, sync
	DeviceMS  float64 `json:"step_device_ms"` // device time per graph replay
	PerTakeMS float64 `json:"device_ms_per_take"`
	NoMoEMS   float64 `json:"step_without_moe_ms"`    // profile: the graph without the feed-forward
	NoMixMS   float64 `json:"step_without_mixers_ms"` // profile: without the mixers
	Launches  int     `json:"step_launches"`
	Bytes     int64   `json:"step_bytes"` // cuda.BackbonePlan.StepRowsBytes: expected distinct experts
	GBs       float64 `json:"step_gb_per_s"`
	CopyShare float64 `json:"copy_share"`
}

// parseRows reads -rows: a comma-separated list of step widths.
func parseRows(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > cuda.MaxStepRows {
			return nil, fmt.Errorf("--rows %q: %q is not a width 1…%d", s, f, cuda.MaxStepRows)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchRows builds a backbone of max(widths) slots, prefills prefill random
// rows into each slot, and times the B-row step of each width: steps
// StepRows calls (wall), then steps graph replays (device). The routed
// experts run as the step's gathered GEMVs (the B-row step's default), and
// with allExperts also as the prefill's multi-row GEMVs (moe_rows).
func benchRows(d *cuda.Device, cfg *drama3.Config, context, prefill, steps int, widths []int, copyGBs float64, allExperts bool, profileRows int) ([]rowsBench, float64, error) {
	slots := 0
	for _, w := range widths {
		slots = max(slots, w)
	}
	b, err := syntheticBackboneSlots(d, cfg, context, slots, 1, nil)
	if err != nil {
		return nil, 0, err
	}
	defer b.Close()
	t := &cfg.Text
	r := rand.New(rand.NewPCG(3, 4))
	token := func() cuda.BackboneRow { return cuda.BackboneRow{Token: r.IntN(t.VocabSize)} }
	// The one-take step on slot 0, for comparison.
	var one float64
	{
		rows := make([]cuda.BackboneRow, prefill)
		for i := range rows {
			rows[i] = token()
		}
		if one, err = timeStepVariant(b, rows, steps, r, t.VocabSize); err != nil {
			return nil, 0, err
		}
	}
	paths := []cuda.ExpertPath{cuda.ExpertsGEMV}
	if allExperts {
		paths = append(paths, cuda.ExpertsRows)
	}
	var out []rowsBench
	for _, path := range paths {
		b.SetStepExperts(path)
		for _, n := range widths {
			// Fresh takes: each slot its own prompt.
			if err := b.Reset(); err != nil {
				return nil, 0, err
			}
			for s := 0; s < n; s++ {
				rows := make([]cuda.BackboneRow, prefill)
				for i := range rows {
					rows[i] = token()
				}
				if err := b.UseSlot(s); err != nil {
					return nil, 0, err
				}
				if _, err := b.Prefill(rows); err != nil {
					return nil, 0, err
				}
			}
			ids := make([]int, n)
			for i := range ids {
				ids[i] = n - 1 - i // rows in another order than the slots
			}
			step := func() error {
				rows := make([]cuda.BackboneRow, n)
				for i := range rows {
					rows[i] = token()
				}
				_, err := b.StepRows(rows, ids)
				return err
			}
			for i := 0; i < 3; i++ { // capture, warm up
				if err := step(); err != nil {
					return nil, 0, fmt.Errorf("%d rows, experts as %v: %w", n, path, err)
				}
			}
			start := time.Now()
			for i := 0; i < steps; i++ {
				if err := step(); err != nil {
					return nil, 0, err
				}
			}
			if profileRows == n && path == cuda.ExpertsGEMV {
				return nil, 0, b.ProfileStepRows(n)
			}
			res := rowsBench{Rows: n, Experts: path.String(), WallMS: msSince(start) / float64(steps), Launches: b.StepRowsLaunches(n)}
			if res.DeviceMS, err = b.TimeStepRows(steps); err != nil {
				return nil, 0, err
			}
			res.PerTakeMS = res.DeviceMS / float64(n)
			if path == cuda.ExpertsGEMV {
				if res.NoMoEMS, err = b.TimeStepRowsParts(cuda.StepMoE, steps); err != nil {
					return nil, 0, err
				}
				if res.NoMixMS, err = b.TimeStepRowsParts(cuda.StepMixers, steps); err != nil {
					return nil, 0, err
				}
			}
			res.Bytes = b.Plan.StepRowsBytes(cfg, b.W.Layout.Experts[0], prefill+steps, n)
			res.GBs = float64(res.Bytes) / (res.DeviceMS * 1e6)
			res.CopyShare = res.GBs / copyGBs
			out = append(out, res)
		}
	}
	return out, one, nil
}

// printRows writes the B-row figures as a table.
func printRows(w io.Writer, rows []rowsBench, oneTakeMS float64) {
	fmt.Fprintf(w, "B-row step\tone take's Step for comparison: %.3f ms on the device\n", oneTakeMS)
	for _, r := range rows {
		fmt.Fprintf(w, "B = %d\t%.3f ms on the device (%.3f per take), %.3f ms wall, %d launches, %.2f GB (expected distinct experts), %.0f GB/s = %.0f%% of copy; experts: %s",
			r.Rows, r.DeviceMS, r.PerTakeMS, r.WallMS, r.Launches, float64(r.Bytes)/1e9, r.GBs, 100*r.CopyShare, r.Experts)
		if r.NoMoEMS > 0 {
			fmt.Fprintf(w, "; without the MoE %.3f ms, without the mixers %.3f ms", r.NoMoEMS, r.NoMixMS)
		}
		fmt.Fprintln(w)
	}
}

//go:build cuda

package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// TestStepRowsRows34FullGeometry: the B-row step at the full geometry
// (bench-backbone's random weights: Drama 3's widths, which the rows34
// kernels need) gives the same outputs with $PROSCENIUM_GPU_MOE_ROWS's
// kernels as without: eight takes prefilled with their own prompts, then
// steps of 2, 4 and 8 of them in a shuffled slot order, replayed from a
// reset with the switches off and on (fast; B = 1's kernels are not
// switched). The old kernels' bits are expected (the unit tests'); a
// difference is logged and each output row held to 1e-4 relative.
func TestStepRowsRows34FullGeometry(t *testing.T) {
	if testing.Short() {
		t.Skip("full geometry")
	}
	cfg, err := drama3.ParseConfig(fullGeometry)
	if err != nil {
		t.Fatal(err)
	}
	d, err := cuda.Open(0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Numerics = drama3.NumericsFast
	const slots, context, prompt = 8, 64, 9
	b, err := syntheticBackboneSlots(d, cfg, context, slots, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := rand.New(rand.NewPCG(34, 1))
	tok := func() cuda.BackboneRow { return cuda.BackboneRow{Token: r.IntN(cfg.Text.VocabSize)} }
	prompts := make([][]cuda.BackboneRow, slots)
	for s := range prompts {
		for range prompt {
			prompts[s] = append(prompts[s], tok())
		}
	}
	type step struct {
		rows  []cuda.BackboneRow
		slots []int
	}
	var sched []step
	for _, n := range []int{2, 4, 8, 4, 2, 8} {
		st := step{slots: r.Perm(slots)[:n]}
		for range n {
			st.rows = append(st.rows, tok())
		}
		sched = append(sched, st)
	}
	run := func(on bool) [][]float32 {
		pg, pd := cuda.SetMoERows(on, on)
		defer cuda.SetMoERows(pg, pd)
		b.SetStepExperts(cuda.ExpertsGEMV) // drops the captured B-row graphs
		if err := b.Reset(); err != nil {
			t.Fatal(err)
		}
		for s, p := range prompts {
			if err := b.UseSlot(s); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Prefill(p); err != nil {
				t.Fatal(err)
			}
		}
		var out [][]float32
		for _, st := range sched {
			y, err := b.StepRows(st.rows, st.slots)
			if err != nil {
				t.Fatalf("StepRows of %d rows (rows34 %v): %v", len(st.rows), on, err)
			}
			out = append(out, append([]float32(nil), y...))
		}
		return out
	}
	old, got := run(false), run(true)
	for i, st := range sched {
		n := len(st.rows)
		differ, worst := 0, 0.0
		w := len(old[i]) / n
		for row := 0; row < n; row++ {
			var num, den float64
			for c := row * w; c < (row+1)*w; c++ {
				if math.Float32bits(got[i][c]) != math.Float32bits(old[i][c]) {
					differ++
				}
				dv := float64(got[i][c]) - float64(old[i][c])
				num += dv * dv
				den += float64(old[i][c]) * float64(old[i][c])
			}
			if !(num <= 1e-8*den) { // ‖Δ‖/‖old‖ ≤ 1e-4, NaN fails
				t.Errorf("step %d (B = %d), row %d: relative difference %.3g from the old kernels' step (bound 1e-4)", i, n, row, math.Sqrt(num/den))
			}
			worst = max(worst, math.Sqrt(num/den))
		}
		what := "the old kernels' bits"
		if differ != 0 {
			what = fmt.Sprintf("%d of %d values differ, worst row %.3g relative", differ, len(old[i]), worst)
		}
		t.Logf("rows34 full-geometry step %d, B = %d: %s", i, n, what)
	}
}

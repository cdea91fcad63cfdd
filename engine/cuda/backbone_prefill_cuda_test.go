//go:build cuda

package cuda

import (
	"fmt"
	"path/filepath"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// A prompt of one and a half prefill passes (the fixed plan's 512 rows)
// and a ragged tail against the CPU's prefill of the same rows: the second
// pass continues every layer's state where the first left it (DeltaNet
// state across passes, attention blocks over keys cached by the earlier
// pass), and each pass's attention cores run in blocks of Plan.MixerRows at
// host-written positions. Under $PROSCENIUM_GPU_PREFILL_PLAN=auto (pass13)
// the device has room for all 785 rows in one pass, which must match the
// CPU as well (its 13 attention blocks at host-written positions).
// Under exact every value is the CPU's bits; under fast each row within the
// backbone's bound. (Reading the position counter instead of the blocks'
// positions, or running a whole pass's attention as one block at the pass's
// first position, fails it from the second block on.)
func TestBackbonePrefillPassesMatchCPU(t *testing.T) {
	for _, dir := range backboneCheckpoints(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := newRand(t)
			ck, cm := loadWithCPU(t, dir)
			cw, tc := &cm.Backbone, &ck.Config.Text
			H := tc.HiddenSize
			n := prefillRows + prefillRows/2 + 17
			var rows []BackboneRow
			var crows []cpu.BackboneRow
			run := func(w *drama3.Backbone[[]float32]) []float32 {
				cb, err := cpu.NewBackbone(tc, w)
				if err != nil {
					t.Fatal(err)
				}
				out, err := cb.Run(crows)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			// An input whose CPU reference pins too few rows is drawn
			// again (conditionDraws), before the device sees it.
			var ref []float32
			var bound []float64
			for draw := 1; ; draw++ {
				rows, crows = testRows(r, n, tc.VocabSize, H)
				ref = run(cw)
				bound = rowBounds(roundingSpread(t, cw, H, run))
				w := widenedRows(bound)
				if float64(w) <= maxWidenedShare*float64(n) || draw == conditionDraws {
					break
				}
				t.Logf("input %d: %d of %d rows ill-conditioned on the CPU (its own rounding moves them past %g); drawing another", draw, w, n, backboneTol/spreadFactor)
			}
			gb, err := LoadBackbone(dev, ck, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer gb.Close()
			// The fixed plan: passes of prefillRows, so two; the auto plan
			// (pass13) on a device with room: one pass of every row.
			want := prefillRows
			if prefillPlan == PrefillPlanAuto && !prefillRowsSet {
				want = min(LongPrefillRows, n)
			}
			if gb.Plan.Chunk != want {
				t.Fatalf("plan's passes are %d rows, want %d (plan %s)", gb.Plan.Chunk, want, PrefillPlanNow())
			}
			t.Logf("%d rows in %d passes of %d (%s), attention cores in blocks of %d; work %.1f MiB",
				n, (n+gb.Plan.Chunk-1)/gb.Plan.Chunk, gb.Plan.Chunk, PrefillPlanNow(), gb.Plan.MixerRows(), float64(gb.Plan.Bytes)/(1<<20))
			got, err := gb.Prefill(rows)
			if err != nil {
				t.Fatal(err)
			}
			checkRowsCPU(t, fmt.Sprintf("%d-row prefill in passes of %d vs CPU", n, gb.Plan.Chunk), got, ref, H, bound)
		})
	}
}

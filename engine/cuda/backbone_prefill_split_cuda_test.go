//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"
)

// TestBackbonePrefillSplit: a split pass (PrefillSplit) leaves what the two
// passes of its parts leave, bit for bit under either policy: every row's
// final-norm hidden state and, through the steps after it, every layer's
// state (DeltaNet states the second part continued, KV rows it appended).
// The cuts cover parts of one attention block (the first at the slot's
// position counter, the second at its host-written position) and of
// several, and a second split after the first's rows (positions from a
// slot that holds rows): what it guards is the second part's positions and
// rows of the scratch, and the order of the parts' layers.
func TestBackbonePrefillSplit(t *testing.T) {
	for _, dir := range backboneCheckpoints(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := newRand(t)
			ck := loadCheckpoint(t, dir)
			H, V := ck.Config.Text.HiddenSize, ck.Config.Text.VocabSize
			gb, err := LoadBackbone(dev, ck, 2*prefillRows, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer gb.Close()
			blk := gb.Plan.MixerRows()
			steps, _ := testRows(r, 3, V, H)
			// run appends the parts' rows (split: one split pass of the
			// two; else a pass each), then the steps, and returns every
			// row's hidden state in order.
			run := func(parts [][]BackboneRow, split bool) []float32 {
				t.Helper()
				if err := gb.Reset(); err != nil {
					t.Fatal(err)
				}
				var out []float32
				for k := 0; k < len(parts); k += 2 {
					one, two := parts[k], parts[k+1]
					if !split {
						for _, p := range [][]BackboneRow{one, two} {
							h, err := gb.Prefill(p)
							if err != nil {
								t.Fatal(err)
							}
							out = append(out, h...)
						}
						continue
					}
					rows := append(append([]BackboneRow(nil), one...), two...)
					if !gb.SplitFits(len(one), len(rows)) {
						t.Fatalf("a split of %d + %d rows does not fit passes of %d", len(one), len(two), gb.Plan.Chunk)
					}
					if err := gb.PrefillSplit(rows, len(one), nil); err != nil {
						t.Fatal(err)
					}
					h := make([]float32, len(rows)*H)
					if err := Download(dev, h, gb.work, gb.Plan.Out); err != nil {
						t.Fatal(err)
					}
					out = append(out, h...)
				}
				for _, s := range steps {
					h, err := gb.Step(s)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, h...)
				}
				return out
			}
			for _, c := range []struct{ cut, rest int }{
				{blk / 2, blk / 3},   // one block each
				{2*blk + 5, blk + 7}, // several each
				{blk - 1, 3*blk + 1}, // one, then several
				{prefillRows - 2, 2}, // a whole pass but two rows
			} {
				name := fmt.Sprintf("%d+%d", c.cut, c.rest)
				one, _ := testRows(r, c.cut, V, H)
				two, _ := testRows(r, c.rest, V, H)
				more, _ := testRows(r, 9, V, H)
				tail, _ := testRows(r, 4, V, H)
				parts := [][]BackboneRow{one, two}
				if c.cut+c.rest+13 <= prefillRows {
					parts = append(parts, more, tail) // a second split after the first's rows
				}
				want, got := run(parts, false), run(parts, true)
				if len(got) != len(want) {
					t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
				}
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s: row %d value %d: split pass %g, two passes %g", name, i/H, i%H, got[i], want[i])
					}
				}
				t.Logf("%s: %d rows and %d steps the same bits", name, len(want)/H-len(steps), len(steps))
			}
			if gb.SplitFits(1, 5) || gb.SplitFits(3, 4) || gb.SplitFits(4, gb.Plan.Chunk+1) {
				t.Fatal("SplitFits took a part of one row, or more rows than a pass")
			}
			if err := gb.PrefillSplit(steps, 1, nil); err == nil {
				t.Fatal("a split with a part of one row was run")
			}
		})
	}
}

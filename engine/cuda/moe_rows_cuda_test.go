//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/cpu"
)

// TestMoERowsGEMV runs the multi-row gathered GEMV over pairs sorted by
// expert against engine/cpu MatVec of each pair with its expert's
// dequantised matrix: every compiled group size, experts without pairs,
// experts with more pairs than a pass holds (and a ragged last pass), FP8
// with ragged scale blocks, BF16, gathered and sorted-order x, padded pitch.
func TestMoERowsGEMV(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		name                        string
		n, k, mats, rows, cols, pad int
		fp8, gather                 bool
	}{
		{"fp8 gate+up 60 tokens top8 of 96, 2048→256", 60, 8, 96, 256, 2048, 0, true, true},
		{"fp8 down 60 tokens top8 of 32, 512→2048 sorted x", 60, 8, 32, 2048, 512, 0, true, false},
		{"fp8 100 tokens top8 of 40, 512→2048", 100, 8, 40, 2048, 512, 0, true, true},
		{"fp8 odd gate+up 70 tokens top3 of 6, 144→80 pitch 160", 70, 3, 6, 80, 144, 16, true, true},
		{"fp8 odd down 70 tokens top3 of 6, 48→136 sorted x", 70, 3, 6, 136, 48, 0, true, false},
		{"fp8 5 tokens top3 of 64 (most experts empty), 272→200", 5, 3, 64, 200, 272, 0, true, true},
		{"bf16 odd 13 tokens top3 of 6, 136→80", 13, 3, 6, 80, 136, 8, false, true},
		{"bf16 odd down 64 tokens top3 of 6, 40→136 sorted x", 64, 3, 6, 136, 40, 0, false, false},
		{"bf16 1 token top8 of 16, 2048→1024", 1, 8, 16, 1024, 2048, 0, false, true},
	} {
		W, S, wf := expertWeights(t, r, c.fp8, c.mats, c.rows, c.cols)
		// Route each token to k distinct experts and sort the pairs by expert
		// (what MoEGroup computes on the device).
		byExpert := make([][]int32, c.mats)
		for tok := 0; tok < c.n; tok++ {
			for _, e := range distinctIDs(r, c.k, c.mats) {
				byExpert[e] = append(byExpert[e], int32(tok))
			}
		}
		offsets := []int32{0}
		var rowIDs []int32
		for e := 0; e < c.mats; e++ {
			rowIDs = append(rowIDs, byExpert[e]...)
			offsets = append(offsets, int32(len(rowIDs)))
		}
		pairs := len(rowIDs)
		// x: the n token rows (gathered through the row ids), or one row per
		// sorted pair; pitch cols + pad, the padding poisoned (never read).
		xrows, pitch := c.n, c.cols+c.pad
		if !c.gather {
			xrows = pairs
		}
		x := make([]float32, xrows*pitch)
		for i := 0; i < xrows; i++ {
			copy(x[i*pitch:], randNonZero(r, c.cols))
			for j := c.cols; j < pitch; j++ {
				x[i*pitch+j] = math.Float32frombits(nanBits)
			}
		}
		ref := make([]float32, pairs*c.rows)
		for e := 0; e < c.mats; e++ {
			w := wf(e)
			for s := offsets[e]; s < offsets[e+1]; s++ {
				xr := int(s)
				if c.gather {
					xr = int(rowIDs[s])
				}
				cpu.MatVec(ref[int(s)*c.rows:(int(s)+1)*c.rows], w, x[xr*pitch:xr*pitch+c.cols], c.rows, c.cols)
			}
		}
		xb, ob := upload(t, x), upload(t, offsets)
		var rb *Block
		if c.gather {
			rb = upload(t, rowIDs)
		}
		for _, group := range moeRowsGroups {
			t.Run(fmt.Sprintf("%s, %d pairs per pass", c.name, group), func(t *testing.T) {
				// Both policies: exact holds the CPU's bits, fast (float32
				// sums) the tolerance of a float32 dot product.
				eachNumerics(t, func(t *testing.T) {
					y := poisoned(t, pairs*c.rows)
					m := MoERows{Rows: c.rows, Cols: c.cols, E: c.mats, Pairs: pairs, XRows: c.n, XStride: pitch, Group: group,
						FP8: c.fp8, Offsets: ob, RowIds: rb}
					if err := dev.Run(func(q *Queue) error { return q.MoERowsGEMV(m, y, W, S, xb) }); err != nil {
						t.Fatal(err)
					}
					got := download(t, y, pairs*c.rows)
					tol := 2e-6
					if !dev.Numerics.Exact() {
						tol = 1e-5
					}
					checkClose(t, "moe rows", got, ref, tol)
					checkProjBitsIfExact(t, "moe rows", got, ref)
				})
			})
		}
	}
}

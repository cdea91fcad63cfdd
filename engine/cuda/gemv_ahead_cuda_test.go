//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/cuda/kernel"
)

// TestGemvWeightsAhead checks the GEMVs that load their first weights before
// the PDL wait (Gemv.WeightsAhead, gemv.cuh gemv_body's ahead) against the
// same instance without: the same bits (the sums' order is the same), and x
// read after the wait. x is written by the kernel just before the GEMV
// (chain_mix_fast, under PDL), over a NaN-poisoned buffer, so a read before
// the wait would show as NaNs or other values; the projection of the x the
// mix wrote is checked against cpu.MatVec too.
func TestGemvWeightsAhead(t *testing.T) {
	r := newRand(t)
	const rows, cols = 1281, 2048 // the MoE's dense projection: 321 blocks of t128r2u2
	u := upload(t, randNonZero(r, 2*cols))
	x, nan := poisoned(t, cols), poisoned(t, cols)
	wh := bf16s(randNonZero(r, rows*cols))
	W := upload(t, wh)
	wq := randFP8(r, rows*cols)
	ns := FP8ScaleCount(rows, cols)
	scales := make([]float32, ns)
	for i := range scales {
		scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
	}
	Wq, S := upload(t, wq), upload(t, scales)
	run := func(t *testing.T, fp8 bool, v GemvVariant, ahead bool) []float32 {
		t.Helper()
		y := poisoned(t, rows)
		if err := dev.Run(func(q *Queue) error {
			if err := q.Copy(x, nan, cols*4); err != nil {
				return err
			}
			if err := kernel.ChainMixFast(q, [3]int{4, 1, 1}, 256, kernel.Ptr(x.Ptr), kernel.Ptr(u.Ptr), cols, cols); err != nil {
				return err
			}
			g := Gemv{Rows: rows, Cols: cols, N: 1, Mats: 1, Variant: v, WeightsAhead: ahead}
			if fp8 {
				return q.GemvFP8(g, y, Wq, S, x)
			}
			return q.GemvBF16(g, y, W, x)
		}); err != nil {
			t.Fatal(err)
		}
		return download(t, y, rows)
	}
	for _, fp8 := range []bool{false, true} {
		variants, kind := GemvBF16Variants, "bf16"
		if fp8 {
			variants, kind = GemvFP8Variants, "fp8"
		}
		for _, v := range variants {
			t.Run(kind+"/"+v.Name(), func(t *testing.T) {
				plain, ahead := run(t, fp8, v, false), run(t, fp8, v, true)
				for i := range plain {
					if math.Float32bits(plain[i]) != math.Float32bits(ahead[i]) {
						t.Fatalf("row %d: %g with the weights ahead, %g without", i, ahead[i], plain[i])
					}
				}
				xs := download(t, x, cols)
				w := bf16ToF32(wh)
				if fp8 {
					w = checkpoint.DequantFP8Blocks(wq, rows, cols, scales, FP8Block)
				}
				ref := make([]float32, rows)
				cpu.MatVec(ref, w, xs, rows, cols)
				checkClose(t, "gemv "+kind+" ahead", ahead, ref, 1e-5)
			})
		}
	}
}

// TestGemvRowsWeightsAhead is TestGemvWeightsAhead for the projections of
// several rows (GemvRows.WeightsAhead: the gemvxa_* instances) at 2, 3, 4,
// 5 and 8 rows of each SIMT variant: the bits of the plain instance (gemvx_*)
// and, against cpu.MatVec, each row's projection of what the mix wrote.
func TestGemvRowsWeightsAhead(t *testing.T) {
	r := newRand(t)
	const rows, cols = 1281, 2048
	w := bf16s(randNonZero(r, rows*cols))
	W, wh := upload(t, w), bf16ToF32(w)
	for _, nb := range []int{2, 3, 4, 5, 8} {
		u := upload(t, randNonZero(r, 2*nb*cols))
		x, nan := poisoned(t, nb*cols), poisoned(t, nb*cols)
		run := func(t *testing.T, v GemvVariant, ahead bool) []float32 {
			t.Helper()
			y := poisoned(t, nb*rows)
			if err := dev.Run(func(q *Queue) error {
				if err := q.Copy(x, nan, int64(nb*cols*4)); err != nil {
					return err
				}
				if err := kernel.ChainMixFast(q, [3]int{8, 1, 1}, 256, kernel.Ptr(x.Ptr), kernel.Ptr(u.Ptr), nb*cols, nb*cols); err != nil {
					return err
				}
				return q.GemvRowsBF16(GemvRows{Rows: rows, Cols: cols, NB: nb, Variant: v, WeightsAhead: ahead}, y, W, x)
			}); err != nil {
				t.Fatal(err)
			}
			return download(t, y, nb*rows)
		}
		for _, v := range GemvRowsVariants {
			t.Run(fmt.Sprintf("%s/%d_rows", v.Name(), nb), func(t *testing.T) {
				plain, ahead := run(t, v, false), run(t, v, true)
				if d, ulp := ULPDiff(ahead, plain); d != 0 {
					t.Fatalf("%d of %d values differ with the weights ahead (max %d ULP)", d, len(plain), ulp)
				}
				xs := download(t, x, nb*cols)
				for b := range nb {
					ref := make([]float32, rows)
					cpu.MatVec(ref, wh, xs[b*cols:(b+1)*cols], rows, cols)
					checkClose(t, fmt.Sprintf("gemv rows ahead, row %d", b), ahead[b*rows:(b+1)*rows], ref, 1e-5)
				}
			})
		}
	}
}

//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/cpu"
)

// TestGemmMmaVariants runs every tensor-core tile and its gemm31 variant
// (q: fragments a half step ahead) on the same inputs, dense and grouped,
// BF16 and FP8 weights: a variant that keeps the tile's k order must give
// the tile's bits (the same MMAs in the same order into the same
// accumulators: q but on BF16 dense tiles); the BF16 dense q reads A by ldmatrix in the MMA's own k order, a
// different order of each MMA's 16 products, and are held like the tiles
// against cpu.MatVec (checkGemm: within 2e-5), their bits against the
// tile's counted. $PROSCENIUM_GEMM_KERNELS cuts the variants tested.
func TestGemmMmaVariants(t *testing.T) {
	r := newRand(t)
	type run func(kernel string) []float32
	check := func(t *testing.T, fp8 bool, ref []float32, gemm run) {
		for _, b := range gemmMmaBase {
			base := gemm(b.name())
			checkGemm(t, "tile", b.name(), base, ref)
			for _, v := range gemmVariants[1:] {
				x, _ := b.variant(v)
				if len(gemmKernelsNamed([]string{x.name()})) == 0 {
					continue
				}
				got := gemm(x.name())
				sameOrder := !x.pipe || x.split || fp8
				differ, maxULP := ULPDiff(got, base)
				if sameOrder {
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(base[i]) {
							t.Fatalf("%s: output %d is %g, the tile %s gave %g (%d of %d differ): a variant in the tile's k order must give its bits",
								x.name(), i, got[i], b.name(), base[i], differ, len(got))
						}
					}
					continue
				}
				checkGemm(t, "variant", x.name(), got, ref)
				t.Logf("%s against %s: %d of %d differ, max %d ULP (ldmatrix k order)", x.name(), b.name(), differ, len(got), maxULP)
			}
		}
	}
	for _, c := range []gemmCase{
		{"60x2048→8192", 60, 8192, 2048, 0, 0, 0},
		{"300x2048→512", 300, 512, 2048, 0, 0, 0},
		{"65x512→2048", 65, 2048, 512, 0, 0, 0},
		{"ragged 37x136→200", 37, 200, 136, 0, 0, 0},
		{"strided 9x40→136", 9, 136, 40, 44, 150, 7},
	} {
		for _, fp8 := range []bool{false, true} {
			t.Run(fmt.Sprintf("dense %s fp8 %v", c.name, fp8), func(t *testing.T) {
				ref, run := denseGemmCase(t, r, c, fp8)
				check(t, fp8, ref, run)
			})
		}
	}
	for _, c := range []struct {
		name                   string
		n, k, mats, rows, cols int
		fp8                    bool
	}{
		{"fp8 300 tokens top8 of 40, 512→2048", 300, 8, 40, 2048, 512, true},
		{"fp8 60 tokens top8 of 64, 2048→1024", 60, 8, 64, 1024, 2048, true},
		{"bf16 odd 13 tokens top3 of 6, 136→80", 13, 3, 6, 80, 136, false},
		{"fp8 odd 70 tokens top3 of 6, 40→136", 70, 3, 6, 136, 40, true},
	} {
		t.Run("grouped "+c.name, func(t *testing.T) {
			ref, run := groupedGemmCase(t, r, c.n, c.k, c.mats, c.rows, c.cols, c.fp8)
			check(t, c.fp8, ref, run)
		})
	}
}

// denseGemmCase makes dense case c's inputs (FP8 or BF16 weights, x with
// its stride) and returns cpu.MatVec of each row and run, which launches a
// tensor-core instance by name on them and returns its n × rows outputs
// (the columns of a strided Y the case does not write left out).
func denseGemmCase(t *testing.T, r *rand.Rand, c gemmCase, fp8 bool) (ref []float32, run func(kernel string) []float32) {
	xs, ys := max(c.xstride, c.cols), max(c.ystride, c.rows)
	x := randNonZero(r, c.n*xs)
	W, S, wf := expertWeights(t, r, fp8, 1, c.rows, c.cols)
	w := wf(0)
	ref = make([]float32, c.n*c.rows)
	for i := 0; i < c.n; i++ {
		cpu.MatVec(ref[i*c.rows:(i+1)*c.rows], w, x[i*xs:i*xs+c.cols], c.rows, c.cols)
	}
	xb := upload(t, x)
	return ref, func(kernel string) []float32 {
		y := poisoned(t, c.n*ys)
		g := Gemm{N: c.n, Rows: c.rows, Cols: c.cols, XStride: c.xstride, YStride: c.ystride, Kernel: kernel}
		yt := Whole(y).At(4 * int64(c.col))
		if err := dev.Run(func(q *Queue) error {
			if fp8 {
				return q.GemmFP8(g, yt, Whole(W), Whole(S), Whole(xb))
			}
			return q.GemmBF16(g, yt, Whole(W), Whole(xb))
		}); err != nil {
			t.Fatal(err)
		}
		all := download(t, y, c.n*ys)
		got := make([]float32, 0, c.n*c.rows)
		for i := 0; i < c.n; i++ {
			got = append(got, all[i*ys+c.col:i*ys+c.col+c.rows]...)
		}
		return got
	}
}

// groupedGemmCase makes a grouped case (n tokens, each to k of mats experts
// of rows × cols, groupedCase) and returns its reference and run, which
// launches a grouped instance by name and returns every pair's outputs.
func groupedGemmCase(t *testing.T, r *rand.Rand, n, k, mats, rows, cols int, fp8 bool) (ref []float32, run func(kernel string) []float32) {
	W, S, wf := expertWeights(t, r, fp8, mats, rows, cols)
	x := randNonZero(r, n*cols)
	g, ref := groupedCase(t, r, n, k, mats, rows, cols, x, wf)
	xb := upload(t, x)
	return ref, func(kernel string) []float32 {
		g.Kernel = kernel
		y := poisoned(t, g.N*rows)
		if err := dev.Run(func(q *Queue) error {
			if fp8 {
				return q.GemmFP8(g, Whole(y), Whole(W), Whole(S), Whole(xb))
			}
			return q.GemmBF16(g, Whole(y), Whole(W), Whole(xb))
		}); err != nil {
			t.Fatal(err)
		}
		return download(t, y, g.N*rows)
	}
}

// groupedCase routes n tokens to k distinct of mats experts, groups the
// pairs by expert (every expert a group, empty ones included) and returns
// the grouped GEMM reading x through row ids, and cpu.MatVec of each pair.
func groupedCase(t *testing.T, r *rand.Rand, n, k, mats, rows, cols int, x []float32, wf func(m int) []float32) (Gemm, []float32) {
	t.Helper()
	byExpert := make([][]int32, mats)
	for tok := 0; tok < n; tok++ {
		for _, e := range distinctIDs(r, k, mats) {
			byExpert[e] = append(byExpert[e], int32(tok))
		}
	}
	offsets := []int32{0}
	var rowIDs []int32
	for e := 0; e < mats; e++ {
		rowIDs = append(rowIDs, byExpert[e]...)
		offsets = append(offsets, int32(len(rowIDs)))
	}
	ref := make([]float32, len(rowIDs)*rows)
	for e := 0; e < mats; e++ {
		w := wf(e)
		for i := offsets[e]; i < offsets[e+1]; i++ {
			tok := int(rowIDs[i])
			cpu.MatVec(ref[int(i)*rows:(int(i)+1)*rows], w, x[tok*cols:(tok+1)*cols], rows, cols)
		}
	}
	return Gemm{N: len(rowIDs), Rows: rows, Cols: cols, Groups: mats, Mats: mats, XRows: n, MaxGroupRows: n,
		Offsets: Whole(upload(t, offsets)), RowIds: Whole(upload(t, rowIDs))}, ref
}

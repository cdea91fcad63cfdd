//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"
)

// gemmWideKernels are gemm32's wide instances the tests run (every one, cut
// by $PROSCENIUM_GEMM_KERNELS).
func gemmWideKernels(t *testing.T) []string {
	return gemmSM90Kernels(t, "gemm32's wide instances (112 or 224 KB of shared memory a block)", gemmWideShapes)
}

// gemmSM90Kernels names the instances of shapes the tests run (every one,
// cut by $PROSCENIUM_GEMM_KERNELS); none before sm_90, whose SMs have less
// shared memory than the wide families take (what names them in the log).
func gemmSM90Kernels(t *testing.T, what string, shapes []gemmMma) []string {
	if dev.Info.Major < 9 {
		t.Logf("sm_%d%d: %s not run", dev.Info.Major, dev.Info.Minor, what)
		return nil
	}
	var k []string
	for _, s := range shapes {
		k = append(k, s.name())
	}
	return gemmKernelsNamed(k)
}

// TestGemmWide runs every wide instance of gemm32 (kernels/gemm.cu
// GEMM_MMA_WIDE: KS sub-steps of 32 columns a ring stage, the ring in
// dynamic shared memory) beside its split tile on the same inputs, dense
// and grouped, BF16 and FP8 weights, the full geometry's experts among
// them: a wide stage runs its sub-steps' MMAs in the tile's order into the
// same accumulators, and its scale is the tile's (a stage lies in one
// 128-column scale block), so it must give the tile's bits; the tile is
// held against cpu.MatVec (checkGemm: within 2e-5). Odd shapes give a last
// stage short of its columns, FP8 rows not 16-byte aligned (8-byte
// copies), groups over several passes of the tile's X rows and W rows past
// the last tile's end.
func TestGemmWide(t *testing.T) {
	wide := gemmWideKernels(t)
	if len(wide) == 0 {
		t.Skip("no wide instance to run")
	}
	r := newRand(t)
	type run func(kernel string) []float32
	check := func(t *testing.T, ref []float32, gemm run) {
		bases := map[string][]float32{}
		for _, k := range wide {
			x := gemmMmaInstances[k]
			b := x
			b.wide = ""
			base, ok := bases[b.name()]
			if !ok {
				base = gemm(b.name())
				checkGemm(t, "tile", b.name(), base, ref)
				bases[b.name()] = base
			}
			got := gemm(k)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(base[i]) {
					// Errorf, not Fatalf: the other families still run.
					differ, maxULP := ULPDiff(got, base)
					t.Errorf("%s: output %d is %g, the tile %s gave %g (%d of %d differ, max %d ULP): a wide stage keeps the tile's k order and must give its bits",
						k, i, got[i], b.name(), base[i], differ, len(got), maxULP)
					break
				}
			}
		}
	}
	for _, c := range []gemmCase{
		{"60x2048→1024", 60, 1024, 2048, 0, 0, 0},
		{"65x512→2048", 65, 2048, 512, 0, 0, 0},
		{"ragged 37x136→200", 37, 200, 136, 0, 0, 0},
		{"ragged 41x200→136", 41, 136, 200, 0, 0, 0},
		{"strided 9x40→136", 9, 136, 40, 44, 150, 7},
	} {
		for _, fp8 := range []bool{false, true} {
			t.Run(fmt.Sprintf("dense %s fp8 %v", c.name, fp8), func(t *testing.T) {
				ref, run := denseGemmCase(t, r, c, fp8)
				check(t, ref, run)
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
		{"fp8 100 tokens top8 of 16, 512→1024 (passes)", 100, 8, 16, 1024, 512, true},
		{"bf16 odd 13 tokens top3 of 6, 136→80", 13, 3, 6, 80, 136, false},
		{"bf16 90 tokens top4 of 8, 520→264", 90, 4, 8, 264, 520, false},
		{"fp8 odd 70 tokens top3 of 6, 40→136", 70, 3, 6, 136, 40, true},
		{"fp8 odd 50 tokens top2 of 5, 200→136", 50, 2, 5, 136, 200, true},
	} {
		t.Run("grouped "+c.name, func(t *testing.T) {
			ref, run := groupedGemmCase(t, r, c.n, c.k, c.mats, c.rows, c.cols, c.fp8)
			check(t, ref, run)
		})
	}
}

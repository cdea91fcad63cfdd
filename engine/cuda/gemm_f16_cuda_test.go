//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/cuda/kernel"
)

// gemmF16Kernels are f16p34's FP16-part instances the tests run (every one,
// cut by $PROSCENIUM_GEMM_KERNELS; in gemm32's wide families, so sm_90 on).
func gemmF16Kernels(t *testing.T) []string {
	return gemmSM90Kernels(t, "f16p34's instances (gemm32's wide families)", gemmF16Shapes)
}

// TestGemmF16 runs every FP16-part instance (kernels/gemm.cu
// GEMM_PARTS_F16: two FP16 parts of each s·x under a power of two per X
// row and stage) on TestGemmWide's cases, dense and grouped (FP8 weights:
// the instances' only format), against cpu.MatVec within checkGemm's 2e-5,
// and logs how far it lies from its BF16 twin (three parts, the same tile
// and family). A BF16 GEMM named by an FP16 instance runs the twin
// (Queue.GemmBF16): its bits must be the twin's.
func TestGemmF16(t *testing.T) {
	ks := gemmF16Kernels(t)
	if len(ks) == 0 {
		t.Skip("no FP16-part instance to run")
	}
	r := newRand(t)
	check := func(t *testing.T, ref []float32, run func(string) []float32) {
		for _, k := range ks {
			got := run(k)
			checkGemm(t, "f16", k, got, ref)
			twin := gemmMmaInstances[k].bf16Twin().name()
			base := run(twin)
			differ, maxULP := ULPDiff(got, base)
			t.Logf("%s against %s: %d of %d differ, max %d ULP; ‖·‖ error %.3g against %.3g", k, twin, differ, len(got), maxULP,
				finiteRelErr(t, k, got, ref), finiteRelErr(t, twin, base, ref))
		}
	}
	for _, c := range []gemmCase{
		{"60x2048→1024", 60, 1024, 2048, 0, 0, 0},
		{"65x512→2048", 65, 2048, 512, 0, 0, 0},
		{"ragged 37x136→200", 37, 200, 136, 0, 0, 0},
		{"ragged 41x200→136", 41, 136, 200, 0, 0, 0},
		{"strided 9x40→136", 9, 136, 40, 44, 150, 7},
	} {
		t.Run("dense "+c.name, func(t *testing.T) {
			ref, run := denseGemmCase(t, r, c, true)
			check(t, ref, run)
		})
	}
	for _, c := range []struct {
		name                   string
		n, k, mats, rows, cols int
	}{
		{"300 tokens top8 of 40, 512→2048", 300, 8, 40, 2048, 512},
		{"60 tokens top8 of 64, 2048→1024", 60, 8, 64, 1024, 2048},
		{"100 tokens top8 of 16, 512→1024 (passes)", 100, 8, 16, 1024, 512},
		{"odd 70 tokens top3 of 6, 40→136", 70, 3, 6, 136, 40},
		{"odd 50 tokens top2 of 5, 200→136", 50, 2, 5, 136, 200},
	} {
		t.Run("grouped "+c.name, func(t *testing.T) {
			ref, run := groupedGemmCase(t, r, c.n, c.k, c.mats, c.rows, c.cols, true)
			check(t, ref, run)
		})
	}
	t.Run("bf16 weights run the twin", func(t *testing.T) {
		_, run := groupedGemmCase(t, r, 13, 3, 6, 80, 136, false)
		for _, k := range ks {
			got, base := run(k), run(gemmMmaInstances[k].bf16Twin().name())
			if differ, maxULP := ULPDiff(got, base); differ != 0 {
				t.Errorf("%s on BF16 weights: %d outputs differ from its twin's (max %d ULP)", k, differ, maxULP)
			}
		}
	})
}

// TestGemmF16Range: FP16's range is the FP16 parts' catch (largest 65504),
// which the per-row, per-stage power of two must make harmless for every
// float32 row. X rows of every magnitude class side by side in one GEMM
// (dense and as one group): Gaussian rows times 1, 1e6, 1e-6, 1e30,
// 1e-30, 3e34 (near float32's top after the scale), a 1e6 spike in 1e-3
// noise, stages alternating 1e4 / 1e-4, every stage's largest just below
// a power of two, subnormal rows (1e-40), all-zero rows, and a row with a
// NaN and one with an Inf. Each finite row against cpu.MatVec on its own
// (‖got − ref‖/‖ref‖ of the row): within 2e-5, but the spike row (a 1e9
// range in one stage: its small values keep FP16's absolute precision,
// 2^-39 of the stage's largest) within fast's 1e-4 and the subnormal rows
// within 5e-3 (s·x rounds in float32's subnormal range; BF16 parts lose
// such x entirely); zero rows exactly zero; the NaN and Inf rows NaN or
// Inf in every output and no other row touched. docs/perf/f16p34-emu
// restates the arithmetic on the host. The streamed experts
// (kernels/gemm_stream.cu: the same parts, a power of two per X row and
// 128-column block) run the same rows as one group.
func TestGemmF16Range(t *testing.T) {
	ks := gemmF16Kernels(t)
	if len(ks) == 0 {
		t.Skip("no FP16-part instance to run")
	}
	r := newRand(t)
	const rows, cols = 264, 2048
	type class struct {
		name string
		tol  float64
		fill func(x []float32)
	}
	gauss := func(x []float32, s float64) {
		for i := range x {
			x[i] = float32(r.NormFloat64() * s)
		}
	}
	classes := []class{
		{"gaussian", 2e-5, func(x []float32) { gauss(x, 1) }},
		{"×1e6", 2e-5, func(x []float32) { gauss(x, 1e6) }},
		{"×1e-6", 2e-5, func(x []float32) { gauss(x, 1e-6) }},
		{"×1e30", 2e-5, func(x []float32) { gauss(x, 1e30) }},
		{"×1e-30", 2e-5, func(x []float32) { gauss(x, 1e-30) }},
		{"×3e34", 2e-5, func(x []float32) { gauss(x, 3e34) }},
		{"1e6 spike in 1e-3", 1e-4, func(x []float32) { gauss(x, 1e-3); x[r.IntN(len(x))] = 1e6 }},
		{"stages 1e4 / 1e-4", 2e-5, func(x []float32) {
			for i := range x {
				s := 1e-4
				if i/32%2 == 1 {
					s = 1e4
				}
				x[i] = float32(r.NormFloat64() * s)
			}
		}},
		{"maxima 2^k(2−2^-23)", 2e-5, func(x []float32) {
			gauss(x, 1)
			for k0 := 0; k0 < len(x); k0 += 32 {
				x[k0+r.IntN(32)] = float32(math.Ldexp(2-math.Ldexp(1, -23), r.IntN(40)-20))
			}
		}},
		{"subnormal 1e-40", 5e-3, func(x []float32) { gauss(x, 1e-40) }},
		{"zeros", 0, func(x []float32) {
			for i := range x {
				x[i] = 0
			}
		}},
		{"NaN", -1, func(x []float32) { gauss(x, 1); x[r.IntN(len(x))] = float32(math.NaN()) }},
		{"Inf", -1, func(x []float32) { gauss(x, 1); x[r.IntN(len(x))] = float32(math.Inf(1)) }},
	}
	const per = 3 // rows of each class
	n := per * len(classes)
	x := make([]float32, n*cols)
	for i := 0; i < n; i++ {
		classes[i/per].fill(x[i*cols : (i+1)*cols])
	}
	W, S, wf := expertWeights(t, r, true, 1, rows, cols)
	w := wf(0)
	ref := make([]float32, n*rows)
	for i := 0; i < n; i++ {
		cpu.MatVec(ref[i*rows:(i+1)*rows], w, x[i*cols:(i+1)*cols], rows, cols)
	}
	xb := upload(t, x)
	offsets := Whole(upload(t, []int32{0, int32(n)}))
	sentinel := make([]float32, n*rows)
	for i := range sentinel {
		sentinel[i] = 12345
	}
	// run: an instance's output for the X rows, dense or as one group.
	type runner struct {
		line string
		run  func(y *Block) error
	}
	var runs []runner
	for _, k := range ks {
		for _, grouped := range []bool{false, true} {
			g := Gemm{N: n, Rows: rows, Cols: cols, Kernel: k}
			if grouped {
				g.Groups, g.Offsets, g.Mats, g.MaxGroupRows = 1, offsets, 1, n
			}
			runs = append(runs, runner{fmt.Sprintf("range %s grouped %v:", k, grouped), func(y *Block) error {
				return dev.Run(func(q *Queue) error { return q.GemmFP8(g, Whole(y), Whole(W), Whole(S), Whole(xb)) })
			}})
		}
	}
	// The streamed instances (kernels/gemm_stream.cu): the same parts with
	// a power of two per X row and 128-column block.
	scratch := Whole(alloc(t, int(GemmStreamScratchBytes(n, cols))))
	for _, k := range kernel.GemmStreamFP8Kernels {
		g := Gemm{N: n, Rows: rows, Cols: cols, Groups: 1, Offsets: offsets, Mats: 1, MaxGroupRows: n}
		runs = append(runs, runner{fmt.Sprintf("range %s:", k), func(y *Block) error {
			return dev.Run(func(q *Queue) error { return q.GemmStreamFP8(k, g, Whole(y), Whole(W), Whole(S), Whole(xb), scratch) })
		}})
	}
	for _, rn := range runs {
		// A finite sentinel, not NaN: the NaN rows must be written NaN,
		// the zero rows written zero.
		y := upload(t, sentinel)
		if err := rn.run(y); err != nil {
			t.Fatal(err)
		}
		got := download(t, y, n*rows)
		line := rn.line
		for i := 0; i < n; i++ {
			c := classes[i/per]
			gr, rr := got[i*rows:(i+1)*rows], ref[i*rows:(i+1)*rows]
			switch {
			case c.tol < 0:
				for j, v := range gr {
					if !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
						t.Errorf("%s row %d (%s): output %d is %g, want NaN or Inf", line, i, c.name, j, v)
						break
					}
				}
			case c.tol == 0:
				for j, v := range gr {
					if v != 0 {
						t.Errorf("%s row %d (%s): output %d is %g, want 0", line, i, c.name, j, v)
						break
					}
				}
			default:
				rel := finiteRelErr(t, fmt.Sprintf("%s row %d (%s)", line, i, c.name), gr, rr)
				if !(rel <= c.tol) {
					t.Errorf("%s row %d (%s): relative error %.3g > %.3g", line, i, c.name, rel, c.tol)
				}
				if i%per == 0 {
					line += fmt.Sprintf(" %s %.2g", c.name, rel)
				}
			}
		}
		t.Log(line)
	}
}

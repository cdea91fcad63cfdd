//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gorgonia.org/cu"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// withGemmXParts lends the device X-parts scratch of bytes for the rest of
// the test, as a backbone lends its XRep, and returns it.
func withGemmXParts(t *testing.T, bytes int64) Tensor {
	t.Helper()
	s := Whole(alloc(t, int(bytes)))
	dev.lendGemmXParts(s, bytes)
	t.Cleanup(func() { dev.returnGemmXParts(s, bytes) })
	return s
}

// withFastNumerics runs the rest of the test under fast numerics, whatever
// PROSCENIUM_TEST_NUMERICS says: the x parts are fast's only.
func withFastNumerics(t *testing.T) {
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast
	t.Cleanup(func() { dev.Numerics = prev })
}

// xpartsTwins are the X-parts entry points (xp15) beside the q tile each
// replaces, by instance name: the dense q tiles and the split tile at two
// counts.
var xpartsTwins = []string{"p3m128n64q", "p3m128n32q", "p3m64n32q", "p3m128n64qz2", "p3m128n64qz3"}

// TestGemmXParts runs every X-parts entry point (kernels/gemm.cu
// GEMM_MMA_XP, gemm_xp_prep) beside the q tile it replaces on the same
// inputs: the same bits (the same parts, the same MMA order; the split
// ones' partials summed in z order alike), and within checkGemm's 2e-5 of
// cpu.MatVec. The scratch starts as NaN (a part or pad gemm_xp_prep leaves
// unwritten would show), and so does Y: outputs outside the GEMM's columns
// of a strided Y must keep the poison. Shapes: the full geometry's router +
// shared gate·up at 60 and 300 rows and shared down at 700, rows past the
// last W tile and X rows past the last tile (ragged), columns not a whole
// 32-column step (1000, 1032: the pads), and strided X and Y.
func TestGemmXParts(t *testing.T) {
	r := newRand(t)
	withGemmSplit(t)
	for _, c := range []gemmCase{
		{"60x2048→1280", 60, 1280, 2048, 0, 0, 0},
		{"300x2048→1280", 300, 1280, 2048, 0, 0, 0},
		{"700x512→2048", 700, 2048, 512, 0, 0, 0},
		{"ragged 65x1000→600", 65, 600, 1000, 0, 0, 0},
		{"strided 37x1032→200", 37, 200, 1032, 1040, 260, 44},
	} {
		t.Run(c.name, func(t *testing.T) {
			xs, ys := max(c.xstride, c.cols), max(c.ystride, c.rows)
			x := randNonZero(r, c.n*xs)
			W, _, wf := expertWeights(t, r, false, 1, c.rows, c.cols)
			w := wf(0)
			ref := make([]float32, c.n*c.rows)
			for i := 0; i < c.n; i++ {
				cpu.MatVec(ref[i*c.rows:(i+1)*c.rows], w, x[i*xs:i*xs+c.cols], c.rows, c.cols)
			}
			xb := upload(t, x)
			need := GemmXPartsBytes(c.n, c.cols)
			scratch := Whole(alloc(t, int(need)))
			g := Gemm{N: c.n, Rows: c.rows, Cols: c.cols, XStride: xs, YStride: c.ystride}
			// run runs instance k's q tile (xp false) or its X-parts entry.
			run := func(k string, xp bool) []float32 {
				y := poisoned(t, c.n*ys)
				yt := Whole(y).At(4 * int64(c.col))
				if err := dev.Run(func(q *Queue) error {
					if err := cu.MemsetD32Async(cu.DevicePtr(scratch.addr()), nanBits, need/4, q.Stream()); err != nil {
						return err
					}
					dev.forgetXParts() // (a memset is not a launch)
					gk := g
					gk.Kernel = k
					if !xp {
						return q.GemmBF16(gk, yt, Whole(W), Whole(xb))
					}
					x := gemmMmaInstances[k]
					entry, split, ok := gemmXPartsKernel(x)
					if !ok {
						return fmt.Errorf("no x-parts entry for %s", k)
					}
					grid := gk.mmaGrid(x)
					part, tiles, err := q.gemmSplitArgs(gk, &k, &grid)
					if err != nil {
						return err
					}
					return q.GemmBF16XParts(entry, split, grid, g, yt, Whole(W), Whole(xb), scratch, part, tiles)
				}); err != nil {
					t.Fatal(err)
				}
				return gemmOutputs(t, k, download(t, y, c.n*ys), c)
			}
			for _, k := range xpartsTwins {
				x := gemmMmaInstances[k]
				if x.splits > 0 && ((c.n+63)/64)*((c.rows+127)/128)*x.splits > gemmSplitTiles {
					continue // past the workspace (the rule never picks it)
				}
				want := run(k, false)
				got := run(k, true)
				checkGemm(t, "x parts", k, got, ref)
				if differ, maxULP := ULPDiff(got, want); differ > 0 {
					t.Errorf("%s: x parts differ from the q tile's bits at %d of %d outputs (max %d ULP)", k, differ, len(got), maxULP)
				}
			}
		})
	}
}

// TestGemmXPartsTailSplit runs a dense GEMM whose 128 × 64 grid is one round
// of 264 blocks and 6 more (64 X rows, 34 560 W rows, 512 columns) as the
// rule routes it, with X-parts scratch lent: gemmXPartsTail gives the 33 792
// W rows of the round to the tile and the last 768 to the split tile. Each
// output within 2e-5 of cpu.MatVec; the round's rows the q tile's bits.
func TestGemmXPartsTailSplit(t *testing.T) {
	r := newRand(t)
	withFastNumerics(t)
	withGemmSplit(t)
	const n, rows, cols = 64, 34560, 512
	rows1, z := gemmXPartsTail(n, rows, cols)
	if rows1 != 33792 || z != 2 {
		t.Fatalf("gemmXPartsTail(%d, %d, %d) = %d, %d; want 33792, 2", n, rows, cols, rows1, z)
	}
	withGemmXParts(t, GemmXPartsBytes(n, cols))
	x := randNonZero(r, n*cols)
	W, _, wf := expertWeights(t, r, false, 1, rows, cols)
	w := wf(0)
	ref := make([]float32, n*rows)
	for i := 0; i < n; i++ {
		cpu.MatVec(ref[i*rows:(i+1)*rows], w, x[i*cols:(i+1)*cols], rows, cols)
	}
	xb := upload(t, x)
	run := func(k string) []float32 {
		y := poisoned(t, n*rows)
		if err := dev.Run(func(q *Queue) error {
			return q.GemmBF16(Gemm{N: n, Rows: rows, Cols: cols, Kernel: k}, Whole(y), Whole(W), Whole(xb))
		}); err != nil {
			t.Fatal(err)
		}
		return download(t, y, n*rows)
	}
	got, tile := run(""), run("p3m128n64q")
	checkGemm(t, "x parts, tail split", "p3m128n64q", got, ref)
	for i := 0; i < n; i++ {
		for j := 0; j < rows1; j++ {
			if a, b := got[i*rows+j], tile[i*rows+j]; math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("row %d, W row %d (of the tile's rounds): %g, the q tile %g", i, j, a, b)
			}
		}
	}
}

// TestGemmXPartsRouting: a fast dense GemmBF16 the rule picks a q tile for
// runs its X-parts entry while scratch with room is lent and the switch is
// on; a named instance, gathered rows, too little scratch, exact numerics
// or the switch off keep the q tile; a wrong switch value is an error.
func TestGemmXPartsRouting(t *testing.T) {
	withFastNumerics(t)
	withGemmSplit(t)
	withGemmXParts(t, GemmXPartsBytes(700, 4096))
	for _, c := range []struct {
		n, rows, cols int
		kernel        string
		want          string
	}{
		{300, 12352, 2048, "", "gemm_xp_bf16_m128n64q"}, // DeltaNet in
		{300, 2048, 4096, "", "gemm_xp_bf16_m128n64qz"}, // out, split
		{700, 2048, 512, "", "gemm_xp_bf16_m128n32q"},   // shared down
		{300, 12352, 2048, "p3m128n64q", ""},            // named
		{800, 2048, 4096, "", ""},                       // past the scratch
		{300, 2048, 512, "", ""},                        // shared down at 300: 128 × 32 s, no twin
	} {
		g := Gemm{N: c.n, Rows: c.rows, Cols: c.cols, Kernel: c.kernel}
		if err := dev.Run(func(q *Queue) error {
			suffix, grid, _, err := g.instance("bf16", true)
			if err != nil {
				return err
			}
			if _, _, err := q.gemmSplitArgs(g, &suffix, &grid); err != nil {
				return err
			}
			k, _, _, ok, err := q.gemmXPartsFor(g, suffix)
			if err != nil {
				return err
			}
			if !ok {
				k = ""
			}
			if k != c.want {
				t.Errorf("%d × %d → %d (kernel %q, tile %s): x parts %q, want %q", c.n, c.cols, c.rows, c.kernel, suffix, k, c.want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	defer func(v string) { gemmXParts = v }(gemmXParts)
	g := Gemm{N: 300, Rows: 12352, Cols: 2048}
	for _, v := range []string{"off", "sideways"} {
		gemmXParts = v
		if err := dev.Run(func(q *Queue) error {
			_, _, _, ok, err := q.gemmXPartsFor(g, "p3m128n64q")
			if v == "off" && (ok || err != nil) {
				t.Errorf("%s=off: x parts %v, %v", GemmXPartsEnv, ok, err)
			}
			if v == "sideways" && err == nil {
				t.Errorf("%s=%s: no error", GemmXPartsEnv, v)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGemmXPartsSpeed times the full geometry's dense GEMMs at 60, 300 and
// 700 rows as the rule picks them, the q tiles (the switch off) against
// their X-parts entries (gemm_xp_prep's launch included), and one layer's
// sum of each (docs/PERF.md "xp15"). Set PROSCENIUM_GEMM_SPEED=1.
func TestGemmXPartsSpeed(t *testing.T) {
	if os.Getenv("PROSCENIUM_GEMM_SPEED") == "" {
		t.Skip("set PROSCENIUM_GEMM_SPEED=1 to time the x parts")
	}
	const batches, perBatch = 5, 8
	withGemmSplit(t)
	withGemmXParts(t, GemmXPartsBytes(700, 4096))
	defer func(v string) { gemmXParts = v }(gemmXParts)
	shapes := []struct {
		what       string
		rows, cols int
		per        int // in a 40-layer prefill
	}{
		{"DeltaNet in 2048→12352", 12352, 2048, 30}, {"qkv 2048→9216", 9216, 2048, 10},
		{"DeltaNet out 4096→2048", 2048, 4096, 30}, {"attention out 4096→2048", 2048, 4096, 10},
		{"router + shared 2048→1281", 1281, 2048, 40}, {"shared down 512→2048", 2048, 512, 40},
	}
	W := alloc(t, 12352*4096*2)
	x := alloc(t, 700*4096*4)
	y := alloc(t, 700*12352*4)
	for _, n := range []int{60, 300, 700} {
		var q3, xp, given float64
		for _, s := range shapes {
			g := Gemm{N: n, Rows: s.rows, Cols: s.cols}
			ms := map[string]float64{}
			for _, v := range []string{"off", "on", "given"} {
				gemmXParts = v
				if v == "given" {
					gemmXParts = "on"
				}
				ms[v] = median(t, batches, perBatch, func(q *Queue) error {
					if v == "on" {
						dev.forgetXParts() // each launch preps (given: the parts held since the first)
					}
					return q.GemmBF16(g, Whole(y), Whole(W), Whole(x))
				})
			}
			q3 += ms["off"] * float64(s.per)
			xp += ms["on"] * float64(s.per)
			given += ms["given"] * float64(s.per)
			t.Logf("xp15 n=%d %s (%s): q tile %.4f ms, x parts %.4f ms with the prep (%.2f×), %.4f given (%.2f×)", n, s.what,
				ChooseGemmFastCols(n, s.rows, s.cols, 0), ms["off"], ms["on"], ms["off"]/ms["on"], ms["given"], ms["off"]/ms["given"])
		}
		t.Logf("xp15 n=%d a prefill's dense GEMMs: q tiles %.3f ms, x parts %.3f ms with every prep (%.2f×), %.3f given (%.2f×)",
			n, q3, xp, q3/xp, given, q3/given)
	}
}

// TestXPartsNormTails: the prefill's norm tails with X-parts scratch lent
// (add_rmsnorm_zc_xp_fast, moe_combine_norm_xp_fast) write the residual and
// the normed rows with the same bits as without, and, under fast numerics,
// the normed rows' parts with gemm_xp_prep's bits (the pads zero, the
// scratch poisoned first), and say so (the held X: the normed rows, their
// count, width and pitch), which a launch forgets; under exact numerics, or
// for a step's rows, nothing is written there. Shapes: Drama 3's width, and
// a width whose parts need pads (136 → 160) with a wider pitch.
func TestXPartsNormTails(t *testing.T) { eachNumerics(t, testXPartsNormTails) }

func testXPartsNormTails(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		n, H, k, stride, sgcol, pitch int
	}{{60, 2048, 8, 1281, 1280, 2048}, {37, 136, 3, 119, 118, 144}, {MaxStepRows, 136, 3, 119, 118, 144}} {
		x, y, w := randNonZero(r, c.n*c.H), randNonZero(r, c.n*c.H), randNonZero(r, c.H)
		yr, ys := randNonZero(r, c.n*c.k*c.H), randNonZero(r, c.n*c.H)
		wts, dense := randNonZero(r, c.n*c.k), randNonZero(r, c.n*c.stride)
		slot := make([]int32, c.n*c.k)
		for i, p := range r.Perm(len(slot)) {
			slot[i] = int32(p)
		}
		yb, wb, yrb, ysb, wtsb, db, sb := upload(t, y), upload(t, w), upload(t, yr), upload(t, ys), upload(t, wts), upload(t, dense), upload(t, slot)
		for _, tail := range []string{"add-norm", "combine-norm"} {
			t.Run(fmt.Sprintf("%s %dx%d pitch %d", tail, c.n, c.H, c.pitch), func(t *testing.T) {
				need := GemmXPartsBytes(c.n, c.H)
				// run runs the tail on a fresh copy of x, with scratch lent
				// (poisoned) or not: the residual, the normed rows, the
				// scratch's contents and what the device holds after it.
				run := func(lend bool) (xs, normed []float32, parts []uint16, held xpartsOf, nb *Block) {
					xb, nb := upload(t, x), poisoned(t, c.n*c.pitch)
					sc := alloc(t, int(need))
					if lend {
						dev.lendGemmXParts(Whole(sc), need)
						defer dev.returnGemmXParts(Whole(sc), need)
					}
					if err := dev.Run(func(q *Queue) error {
						if err := cu.MemsetD32Async(cu.DevicePtr(sc.Ptr), nanBits, need/4, q.Stream()); err != nil {
							return err
						}
						dev.forgetXParts()
						if tail == "add-norm" {
							return q.AddRMSNormZC(xb, yb, nb, wb, c.n, c.H, c.pitch, 1e-6)
						}
						return q.MoECombineNorm(xb, yrb, wtsb, ysb, db, c.n, c.stride, c.sgcol, c.H, c.k, sb, nb, wb, c.pitch, 1e-6)
					}); err != nil {
						t.Fatal(err)
					}
					held = dev.xpartsHeld()
					parts = make([]uint16, need/2)
					if err := Download(dev, parts, sc, 0); err != nil {
						t.Fatal(err)
					}
					return download(t, xb, c.n*c.H), download(t, nb, c.n*c.pitch), parts, held, nb
				}
				x0, n0, _, _, _ := run(false)
				x1, n1, p1, held, nb := run(true)
				same := func(what string, got, want []float32) {
					t.Helper()
					if differ, maxULP := ULPDiff(got, want); differ > 0 {
						t.Errorf("%s with x parts: %d of %d differ from the tail's without (max %d ULP)", what, differ, len(got), maxULP)
					}
				}
				same("residual", x1, x0)
				same("normed", n1, n0)
				if dev.Numerics.Exact() || c.n <= MaxStepRows {
					if held != (xpartsOf{}) {
						t.Errorf("held %+v: exact numerics and a step's rows write no parts", held)
					}
					for i := 0; i+1 < len(p1); i += 2 {
						if v := uint32(p1[i]) | uint32(p1[i+1])<<16; v != nanBits {
							t.Fatalf("scratch word %d written (%#08x): exact numerics and a step's rows write no parts", i/2, v)
						}
					}
					return
				}
				if want := (xpartsOf{nb.Ptr, c.n, c.H, c.pitch}); held != want {
					t.Errorf("held %+v, want %+v", held, want)
				}
				// gemm_xp_prep on the same normed rows into scratch not lent.
				ref := alloc(t, int(need))
				g := Gemm{N: c.n, Rows: 8, Cols: c.H, XStride: c.pitch}
				if err := dev.Run(func(q *Queue) error {
					_, _, err := q.gemmXPartsPrep(g, Whole(nb), Whole(ref))
					return err
				}); err != nil {
					t.Fatal(err)
				}
				p2 := make([]uint16, need/2)
				if err := Download(dev, p2, ref, 0); err != nil {
					t.Fatal(err)
				}
				for i := range p2 {
					if p1[i] != p2[i] {
						t.Fatalf("part element %d (part %d, row %d, column %d): %#04x, gemm_xp_prep's %#04x", i,
							i/(c.n*GemmXPartsKpad(c.H)), i%(c.n*GemmXPartsKpad(c.H))/GemmXPartsKpad(c.H), i%GemmXPartsKpad(c.H), p1[i], p2[i])
					}
				}
				if h := dev.xpartsHeld(); h != (xpartsOf{}) {
					t.Errorf("held %+v after another launch", h)
				}
			})
		}
	}
}

// TestBackboneXPartsBits runs each test checkpoint's 300-row prefill (fast
// numerics) with every dense projection split (PROSCENIUM_GPU_GEMM_SPLITK=all:
// the tiny shapes' GEMMs on the split tile, which has an X-parts entry) with
// xp15 off and on: the same bits. On, the norm tails, the DeltaNet norm and
// the SwiGLU write their rows' parts and the GEMMs on them skip their prep
// (the held X), the others prep: a part written wrong, or one taken from a
// scratch that no longer holds it, would show.
func TestBackboneXPartsBits(t *testing.T) {
	if dev.Numerics.Exact() {
		t.Skip("exact numerics run no x parts (PROSCENIUM_TEST_NUMERICS=fast)")
	}
	defer func(s, x string) { gemmSplitK, gemmXParts = s, x }(gemmSplitK, gemmXParts)
	gemmSplitK = "all"
	for _, dir := range backboneCheckpoints(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := newRand(t)
			ck, _ := loadWithCPU(t, dir)
			tc := &ck.Config.Text
			const n = 300
			rows, _ := testRows(r, n, tc.VocabSize, tc.HiddenSize)
			gb, err := LoadBackbone(dev, ck, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer gb.Close()
			out := map[string][]float32{}
			for _, v := range []string{"off", "on"} {
				gemmXParts = v
				if err := gb.Reset(); err != nil {
					t.Fatal(err)
				}
				if out[v], err = gb.Prefill(rows); err != nil {
					t.Fatal(err)
				}
			}
			if differ, maxULP := ULPDiff(out["on"], out["off"]); differ > 0 {
				t.Errorf("prefill with x parts: %d of %d outputs differ from the q tiles' bits (max %d ULP)", differ, len(out["on"]), maxULP)
			}
		})
	}
}

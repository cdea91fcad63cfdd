//go:build cuda

package cuda

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"testing"

	"gorgonia.org/cu"

	"proscenium/engine/cpu"
)

// withGemmSplit lends the device a split-K workspace (counters zero) for
// the rest of the test, as a backbone lends its plan's; without one a
// named split instance is refused.
func withGemmSplit(t *testing.T) {
	t.Helper()
	b := alloc(t, GemmSplitBytes)
	if err := dev.Run(func(q *Queue) error { return q.ZeroTensor(Whole(b), gemmSplitCounterBytes) }); err != nil {
		t.Fatal(err)
	}
	dev.lendGemmSplit(Whole(b))
	t.Cleanup(func() { dev.returnGemmSplit(Whole(b)) }) // before alloc's free (cleanups run last first)
}

// TestGemmSplitK runs the split-K instance (kernels/gemm.cu
// GEMM_MMA_SPLITK: the 128 × 64 q tile's k steps over the grid's z, each
// tile's last block summing the Z partial tiles in z order, dsplit34) with
// every split count beside the tile it splits (p3m128n64q) on the same
// inputs, BF16 and FP8 weights: each output within 2e-5 of cpu.MatVec
// (checkGemm, as every fast instance) and within both distances to the CPU
// of the tile's; every count the same bits twice, the workspace's
// partials poisoned with NaN before each run (a stale partial would show);
// and, BF16, the bits of the z-ordered sum p0 + p1 + … + p(Z−1) of the
// tile run on each split's own column range (the same steps from zero
// accumulators: the split's partial) — so the result does not depend on
// which block finishes last. The shapes cut splits inside an FP8 scale
// block (the scale is the block's, taken at the split's absolute column),
// leave a last step short of its columns, W rows past the last tile, X
// rows past the last 64, and a strided Y whose other columns must keep
// their values. Without a workspace a named split instance is refused and
// a split the rule picks runs unsplit (the tile's bits).
func TestGemmSplitK(t *testing.T) {
	r := newRand(t)
	tile := gemmSplitTile.name()
	var splits []string
	for z := 2; z <= gemmSplitMax; z++ {
		x := gemmSplitTile
		x.splits = z
		splits = append(splits, x.name())
	}
	splits = gemmKernelsNamed(splits)
	if len(splits) == 0 {
		t.Skip("no split-K instance named")
	}
	withGemmSplit(t)
	ws, _ := dev.gemmSplitWorkspace()
	poisonParts := func() {
		if err := dev.Run(func(q *Queue) error {
			return cu.MemsetD32Async(cu.DevicePtr(ws.At(gemmSplitCounterBytes).addr()), nanBits,
				(GemmSplitBytes-gemmSplitCounterBytes)/4, q.Stream())
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []gemmCase{
		{"60x4096→2048", 60, 2048, 4096, 0, 0, 0},
		{"300x2048→1280", 300, 1280, 2048, 0, 0, 0},
		{"ragged 65x1000→600", 65, 600, 1000, 0, 0, 0},
		{"strided 37x1032→200", 37, 200, 1032, 1040, 260, 44},
	} {
		for _, fp8 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s fp8 %v", c.name, fp8), func(t *testing.T) {
				xs, ys := max(c.xstride, c.cols), max(c.ystride, c.rows)
				x := randNonZero(r, c.n*xs)
				W, S, wf := expertWeights(t, r, fp8, 1, c.rows, c.cols)
				w := wf(0)
				ref := make([]float32, c.n*c.rows)
				for i := 0; i < c.n; i++ {
					cpu.MatVec(ref[i*c.rows:(i+1)*c.rows], w, x[i*xs:i*xs+c.cols], c.rows, c.cols)
				}
				xb := upload(t, x)
				// gemm runs kernel on W (cols columns) and X from column x0.
				gemm := func(kernel string, W *Block, x0, cols int) []float32 {
					poisonParts()
					y := poisoned(t, c.n*ys)
					g := Gemm{N: c.n, Rows: c.rows, Cols: cols, XStride: xs, YStride: c.ystride, Kernel: kernel}
					yt := Whole(y).At(4 * int64(c.col))
					if err := dev.Run(func(q *Queue) error {
						if fp8 {
							return q.GemmFP8(g, yt, Whole(W), Whole(S), Whole(xb).At(4*int64(x0)))
						}
						return q.GemmBF16(g, yt, Whole(W), Whole(xb).At(4*int64(x0)))
					}); err != nil {
						t.Fatal(err)
					}
					return gemmOutputs(t, kernel, download(t, y, c.n*ys), c)
				}
				run := func(kernel string) []float32 { return gemm(kernel, W, 0, c.cols) }
				same := func(what string, got, want []float32) bool {
					t.Helper()
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							differ, maxULP := ULPDiff(got, want)
							t.Errorf("%s: output %d is %g, not %g (%d of %d differ, max %d ULP)", what, i, got[i], want[i], differ, len(got), maxULP)
							return false
						}
					}
					return true
				}
				base := run(tile)
				checkGemm(t, "tile", tile, base, ref)
				t.Logf("%s bits digest %016x", tile, bitsDigest(base))
				// The split's partials: the tile on each split's columns.
				var wh []uint16
				if !fp8 {
					wh = make([]uint16, c.rows*c.cols)
					if err := Download(dev, wh, W, 0); err != nil {
						t.Fatal(err)
					}
				}
				steps := (c.cols + 31) / 32
				partial := func(k0, k1 int) []float32 {
					slice := make([]uint16, c.rows*(k1-k0))
					for m := 0; m < c.rows; m++ {
						copy(slice[m*(k1-k0):(m+1)*(k1-k0)], wh[m*c.cols+k0:m*c.cols+k1])
					}
					return gemm(tile, upload(t, slice), k0, k1-k0)
				}
				blocks := ((c.n + 63) / 64) * ((c.rows + 127) / 128)
				for _, k := range splits {
					if blocks*gemmMmaInstances[k].splits > gemmSplitTiles {
						continue // past the workspace: the rule never picks it (TestChooseGemmSplitK)
					}
					got := run(k)
					checkGemm(t, "split-K", k, got, ref)
					// Two fast results can differ by no more than both their
					// distances to the CPU (‖a − b‖ ≤ ‖a − c‖ + ‖c − b‖).
					checkClose(t, k+" against "+tile, got, base, pairBound(t, got, base, ref))
					differ, maxULP := ULPDiff(got, base)
					t.Logf("%s: %d of %d outputs differ from %s's bits, max %d ULP", k, differ, len(got), tile, maxULP)
					same(k+" run again", run(k), got)
					// Two processes of one seed (PROSCENIUM_TEST_SEED) print the
					// same digests (docs/perf/h200-dsplit34.sh runs two at once).
					t.Logf("%s bits digest %016x", k, bitsDigest(got))
					z := gemmMmaInstances[k].splits
					if fp8 || z > steps || (z != 3 && z != 5 && z != gemmSplitMax) {
						continue // FP8: a split inside a scale block has no sliced form
					}
					want := make([]float32, len(got))
					for s := 0; s < z; s++ {
						k0, k1 := steps*s/z*32, min(steps*(s+1)/z*32, c.cols)
						p := partial(k0, k1)
						for i := range want {
							if s == 0 {
								want[i] = p[i]
							} else {
								want[i] += p[i] // float32: rounded each add
							}
						}
					}
					same(k+" against the z-ordered sum of its splits' partials", got, want)
				}
			})
		}
	}
	t.Run("no workspace", func(t *testing.T) {
		ws, _ := dev.gemmSplitWorkspace()
		dev.returnGemmSplit(ws)
		defer dev.lendGemmSplit(ws)
		if _, ok := dev.gemmSplitWorkspace(); ok {
			t.Skip("another workspace is lent")
		}
		W, _, _ := expertWeights(t, r, false, 1, 2048, 4096)
		xb, y := upload(t, randNonZero(r, 60*4096)), poisoned(t, 60*2048)
		g := Gemm{N: 60, Rows: 2048, Cols: 4096, Kernel: tile + "z4"}
		if err := dev.Run(func(q *Queue) error { return q.GemmBF16(g, Whole(y), Whole(W), Whole(xb)) }); err == nil {
			t.Errorf("%s ran without a workspace", g.Kernel)
		}
	})
}

// gemmOutputs is case c's outputs within all, its poisoned strided Y
// (c.n rows of max(c.ystride, c.rows) floats, the outputs from column c.col):
// every other column must still hold the poison.
func gemmOutputs(t *testing.T, what string, all []float32, c gemmCase) []float32 {
	t.Helper()
	ys := max(c.ystride, c.rows)
	got := make([]float32, 0, c.n*c.rows)
	for i := 0; i < c.n; i++ {
		for j := 0; j < ys; j++ {
			if (j < c.col || j >= c.col+c.rows) && math.Float32bits(all[i*ys+j]) != nanBits {
				t.Fatalf("%s: row %d column %d outside the output is %g, not the poison", what, i, j, all[i*ys+j])
			}
		}
		got = append(got, all[i*ys+c.col:i*ys+c.col+c.rows]...)
	}
	return got
}

// bitsDigest is FNV-1a over v's float32 bits.
func bitsDigest(v []float32) uint64 {
	h := fnv.New64a()
	var b [4]byte
	for _, x := range v {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
		h.Write(b[:])
	}
	return h.Sum64()
}

// pairBound is the most ‖a − b‖/‖b‖ can be for two results a and b of the
// same product with the distances they measure to its CPU reference ref:
// (‖a − ref‖ + ‖b − ref‖)/‖b‖, with 1 % for the float64 sums' rounding.
func pairBound(t *testing.T, a, b, ref []float32) float64 {
	t.Helper()
	l2 := func(v []float32) float64 {
		var s float64
		for _, x := range v {
			s += float64(x) * float64(x)
		}
		return math.Sqrt(s)
	}
	return 1.01 * (finiteRelErr(t, "a", a, ref) + finiteRelErr(t, "b", b, ref)) * l2(ref) / l2(b)
}

//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/cuda/kernel"
)

// gemvMMAUnsplit runs gemvx_mma_bf16_fast on g's rows with one block a tile
// over every column (no workspace): the instance before its split.
func gemvMMAUnsplit(q *Queue, g GemvRows, y, W, x *Block) error {
	xs, ys := max(g.XStride, g.Cols), max(g.YStride, g.Rows)
	return kernel.GemvxMmaBF16Fast(q, [3]int{(g.Rows + gemvxMMARows - 1) / gemvxMMARows, 1, 1}, gemvThreads,
		devPtr(y), devPtr(W), devPtr(x), xs, ys, g.NB, g.Rows, g.Cols, 0, 0)
}

// TestGemvMMASplit checks the tensor-core projection split over its columns
// (kernels/gemv.cu gemvx_mma_bf16_fast with part and tiles: each tile's last
// block sums the Z partials in z order) at the step's narrow shapes — the
// out projection 2048 × 4096, the router and shared gate·up 1281 × 2048,
// the shared down 2048 × 512 — and a ragged 200 × 1024 (rows past the last
// tile), for 1, 2, 4 and 8 rows with strided x and y: every output within
// 1e-5 of cpu.MatVec (as the unsplit instance, TestGemvRowsMatchesOneRow)
// and of the unsplit instance's; the same bits on a second run with the
// workspace's partials poisoned with NaN between (a stale partial would
// show); the tile counters back at zero; y's pitch gaps unwritten. Fast
// numerics only (the exact step keeps its float64 GEMVs).
func TestGemvMMASplit(t *testing.T) {
	if dev.Numerics.Exact() {
		t.Skip("the tensor-core projection is fast numerics only")
	}
	withGemmSplit(t)
	ws, ok := dev.gemmSplitWorkspace()
	if !ok {
		t.Fatal("no split-K workspace lent")
	}
	r := newRand(t)
	shapes := []struct{ rows, cols, xpad, ypad int }{{2048, 4096, 4, 3}, {1281, 2048, 0, 0}, {2048, 512, 8, 0}, {200, 1024, 4, 5}}
	for _, s := range shapes {
		z := gemvMMASplits(s.rows, s.cols)
		if z < 2 {
			t.Fatalf("%d × %d: %d splits, want the narrow shapes split", s.rows, s.cols, z)
		}
		wh := bf16s(randNonZero(r, s.rows*s.cols))
		wf := bf16ToF32(wh)
		W := upload(t, wh)
		for _, nb := range []int{1, 2, 4, 8} {
			t.Run(fmt.Sprintf("%dx%d/z%d/%d", s.rows, s.cols, z, nb), func(t *testing.T) {
				xs, ys := s.cols+s.xpad, s.rows+s.ypad
				x := randNonZero(r, (nb-1)*xs+s.cols)
				xb := upload(t, x)
				n := (nb-1)*ys + s.rows
				g := GemvRows{Rows: s.rows, Cols: s.cols, NB: nb, XStride: xs, YStride: ys, Variant: GemvRowsMMA}
				run := func(unsplit bool) []float32 {
					y := poisoned(t, n)
					if err := dev.Run(func(q *Queue) error {
						if unsplit {
							return gemvMMAUnsplit(q, g, y, W, xb)
						}
						return q.GemvRowsBF16(g, y, W, xb)
					}); err != nil {
						t.Fatal(err)
					}
					return download(t, y, n)
				}
				split := run(false)
				tiles := (s.rows + gemvxMMARows - 1) / gemvxMMARows
				counters := download(t, &Block{Kind: DeviceMem, Ptr: ws.addr(), Bytes: int64(4 * tiles)}, tiles)
				for i, c := range counters {
					if c != 0 {
						t.Fatalf("tile %d's counter left at %#x", i, math.Float32bits(c))
					}
				}
				if err := dev.Fill32(&Block{Kind: DeviceMem, Ptr: ws.addr() + uintptr(gemmSplitCounterBytes),
					Bytes: int64(z * tiles * gemvxMMARows * 8 * 4)}, nanBits); err != nil {
					t.Fatal(err)
				}
				again, unsplit := run(false), run(true)
				if differ, ulp := ULPDiff(split, again); differ != 0 {
					t.Fatalf("%d of %d values differ between two runs (by up to %d ULP)", differ, n, ulp)
				}
				for b := 0; b < nb; b++ {
					row := split[b*ys : b*ys+s.rows]
					ref := make([]float32, s.rows)
					cpu.MatVec(ref, wf, x[b*xs:b*xs+s.cols], s.rows, s.cols)
					checkCloseQuiet(t, fmt.Sprintf("row %d of %d against the CPU", b, nb), row, ref, 1e-5)
					checkCloseQuiet(t, fmt.Sprintf("row %d of %d against the unsplit instance", b, nb), row,
						unsplit[b*ys:b*ys+s.rows], 1e-5)
					if b < nb-1 {
						for c := s.rows; c < ys; c++ {
							if v := split[b*ys+c]; v == v {
								t.Fatalf("y's pitch gap at row %d column %d was written (%v)", b, c, v)
							}
						}
					}
				}
			})
		}
	}
}

// TestGemvMMASplitSpeed times the step's narrow projections (skipped unless
// PROSCENIUM_GEMVX_BANDWIDTH is set) for 1, 2, 4 and 8 rows: the instance
// the step runs without the split (the one-row GEMV, ChooseGemvRows' SIMT
// instance), the tensor-core instance unsplit and split (gemvMMASplits).
// Each figure is the median of graph replays over enough copies of the
// matrix that L2 cannot serve a repeated read; GB/s counts the matrix once.
func TestGemvMMASplitSpeed(t *testing.T) {
	if os.Getenv("PROSCENIUM_GEMVX_BANDWIDTH") == "" {
		t.Skip("set PROSCENIUM_GEMVX_BANDWIDTH=1 to time the split projections")
	}
	if dev.Numerics.Exact() {
		t.Skip("the tensor-core projection is fast numerics only")
	}
	withGemmSplit(t)
	const batches, perBatch = 7, 16
	shapes := []struct {
		name       string
		rows, cols int
	}{{"out 4096→2048", 2048, 4096}, {"router+shared 2048→1281", 1281, 2048}, {"shared down 512→2048", 2048, 512}}
	r := rand.New(rand.NewPCG(5, 7))
	for _, s := range shapes {
		mat := int64(s.rows) * int64(s.cols) * 2
		copies := int(max(2, (256<<20)/mat+1))
		W := allocNoCleanup(t, int(mat)*copies)
		if err := dev.Fill32(W, 0x3c003c00); err != nil {
			t.Fatal(err)
		}
		x := upload(t, randNonZero(r, MaxStepRows*s.cols))
		y := alloc(t, MaxStepRows*s.rows*4)
		w := func(i int) *Block {
			return &Block{Kind: DeviceMem, Ptr: W.Ptr + uintptr(int64(i%copies)*mat), Bytes: mat}
		}
		for _, b := range []int{1, 2, 4, 8} {
			i := 0
			g := GemvRows{Rows: s.rows, Cols: s.cols, NB: b}
			var simt float64
			if b == 1 {
				simt = medianGraph(t, batches, perBatch, func(q *Queue) error {
					i++
					return q.GemvBF16(q.backboneGemv(q1Gemv(s.rows, s.cols), false), y, w(i), x)
				}, nil)
			} else {
				gs := g
				gs.Variant = ChooseGemvRows(s.rows, s.cols, b)
				simt = medianGraph(t, batches, perBatch, func(q *Queue) error {
					i++
					return q.GemvRowsBF16(gs, y, w(i), x)
				}, nil)
			}
			g.Variant = GemvRowsMMA
			unsplit := medianGraph(t, batches, perBatch, func(q *Queue) error {
				i++
				return gemvMMAUnsplit(q, g, y, w(i), x)
			}, nil)
			split := medianGraph(t, batches, perBatch, func(q *Queue) error {
				i++
				return q.GemvRowsBF16(g, y, w(i), x)
			}, nil)
			gbs := func(ms float64) float64 { return float64(mat) / (ms * 1e6) }
			t.Logf("gemvx13 %s B=%d: simt %.2f µs (%.0f GB/s), mma %.2f µs (%.0f GB/s), mma split z%d %.2f µs (%.0f GB/s)",
				s.name, b, simt*1e3, gbs(simt), unsplit*1e3, gbs(unsplit), gemvMMASplits(s.rows, s.cols), split*1e3, gbs(split))
		}
		if err := dev.Free(W); err != nil {
			t.Fatal(err)
		}
	}
}

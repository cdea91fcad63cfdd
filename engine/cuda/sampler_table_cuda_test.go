//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/sampling"
)

// TestSamplerLeanTable: the lean draw with the next layer's table norm in its
// tail (sample_logits_lean_table, docs/PERF.md "drawnorm28") against the lean
// draw followed by tower_table_add_rmsnorm, the launch it stands in for: the
// same codes and the same bits of x (+= T[code]) and of the attention norm's
// output, for a residual draw (no end index; one row after end of speech:
// code 0's row) and for the semantic draw (an end index; one row forced to
// the end code, which is past the table: code 0's row), rows of takes in
// permuted slots, at Drama 3's width and two others.
func TestSamplerLeanTable(t *testing.T) {
	withSampler("sample_logits_lean", func() {
		r := newRand(t)
		const rows, eps = 4, 1e-6
		slotIDs := []int32{2, 0, 3, 1}
		for _, c := range []struct {
			n, entries, endIndex int
		}{{1024, 1024, -1}, {4097, 4096, 4096}} {
			for _, width := range []int{2048, 100, 8192} {
				t.Run(fmt.Sprintf("n%d/width%d", c.n, width), func(t *testing.T) {
					cb := 4
					if c.endIndex >= 0 {
						cb = 0
					}
					tab, w := randNonZero(r, c.entries*width), randNonZero(r, width)
					x0 := randNonZero(r, rows*width)
					logits := make([]float32, rows*c.n)
					for b := 0; b < rows; b++ {
						leanTestLogits(r, logits[b*c.n:(b+1)*c.n])
					}
					tb, wb, lb, sb := upload(t, tab), upload(t, w), upload(t, logits), upload(t, slotIDs)
					words := make([]uint32, 0, rows*frameCtrlWords)
					for s := 0; s < rows; s++ {
						f, err := newFrameControl(sampling.Settings{Temperature: 0.7, TopP: 0.9, TopK: 30}, r.Uint64(), 0)
						if err != nil {
							t.Fatal(err)
						}
						f[fcFrame] = uint32(r.IntN(3000))
						switch {
						case s == 1 && c.endIndex < 0: // after end of speech: code 0's row
							f[fcEnd] = 1
						case s == 1: // the semantic draw forced to the end code
							f[fcForced] = 1
							f[fcForcedCodes+cb] = uint32(c.endIndex)
						}
						words = append(words, f[:]...)
					}
					ctrl := alloc(t, rows*frameCtrlWords*4)
					x, normed := alloc(t, rows*width*4), alloc(t, rows*width*4)
					type result struct {
						ctrl      []uint32
						x, normed []float32
					}
					run := func(fold bool) result {
						if err := firstErr(Upload(dev, ctrl, 0, words), Upload(dev, x, 0, x0), dev.Fill32(normed, nanBits)); err != nil {
							t.Fatal(err)
						}
						dt := &drawTable{T: Whole(tb), Entries: c.entries, W: Whole(wb), X: devPtr(x), Normed: devPtr(normed), Width: width, Eps: eps}
						if err := dev.Run(func(q *Queue) error {
							if fold {
								return q.sampleLogitsTable(lb, c.n, cb, c.endIndex, ctrl, rows, dt, devPtr(sb))
							}
							return firstErr(q.sampleLogits(lb, c.n, cb, c.endIndex, ctrl, nil, rows, nil, devPtr(sb)),
								kernel.TowerTableAddRMSNorm(q, [3]int{rows, 1, 1}, towerRowThreads, devPtr(normed), devPtr(x), devPtr(tb),
									devPtr(ctrl), cb, c.entries, devPtr(wb), width, eps, devPtr(sb)))
						}); err != nil {
							t.Fatal(err)
						}
						got := result{ctrl: make([]uint32, rows*frameCtrlWords)}
						if err := Download(dev, got.ctrl, ctrl, 0); err != nil {
							t.Fatal(err)
						}
						got.x, got.normed = download(t, x, rows*width), download(t, normed, rows*width)
						return got
					}
					want, got := run(false), run(true)
					for s := 0; s < rows; s++ {
						wc, gc := want.ctrl[s*frameCtrlWords:], got.ctrl[s*frameCtrlWords:]
						if wc[fcCodes+cb] != gc[fcCodes+cb] || wc[fcEnd] != gc[fcEnd] || wc[fcError] != gc[fcError] {
							t.Fatalf("slot %d: code %d end %d error %#x with the fold, %d %d %#x without", s,
								gc[fcCodes+cb], gc[fcEnd], gc[fcError], wc[fcCodes+cb], wc[fcEnd], wc[fcError])
						}
						if wc[fcError] != 0 {
							t.Fatalf("slot %d: error bits %#x", s, wc[fcError])
						}
					}
					if c.endIndex >= 0 && want.ctrl[1*frameCtrlWords+fcEnd] != 1 {
						t.Fatal("the forced row did not end the take: the test would not reach code 0's row")
					}
					requireSameBits(t, "x", got.x, want.x)
					requireSameBits(t, "normed", got.normed, want.normed)
					for i, v := range got.normed {
						if math.IsNaN(float64(v)) {
							t.Fatalf("normed[%d] is NaN", i)
						}
					}
				})
			}
		}
	})
}

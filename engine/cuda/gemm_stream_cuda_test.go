//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// TestGemmStreamFP8 runs every streamed instance (kernels/gemm_stream.cu) on
// grouped GEMMs of FP8 weights against cpu.MatVec of each pair within
// checkGemm's 2e-5 (the FP16-part tiles' bound; TestGemmF16Range runs the
// magnitude classes): the distributions of a 300- and a 700-row pass of
// top-8 over 256 experts (9.4 and 21.9 pairs an expert on average, so
// every instance runs groups of more pairs than one pass takes), a group
// of ≈ 50 pairs (several passes), X read through row ids and contiguous,
// matrices by ids, and odd shapes: W rows past a block's 128 and a warp's
// 16, columns past a 128-column step and a single 16-column piece. Outputs
// start as NaN, so an unwritten one fails.
func TestGemmStreamFP8(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		name                   string
		n, k, mats, rows, cols int
		contiguous, ids        bool
	}{
		{"300 tokens top8 of 256, 2048→256", 300, 8, 256, 256, 2048, false, false},
		{"700 tokens top8 of 256, 512→384 contiguous", 700, 8, 256, 384, 512, true, false},
		{"60 tokens top8 of 64, 2048→1024", 60, 8, 64, 1024, 2048, false, false},
		{"100 tokens top8 of 16, 512→1024 (passes) by ids", 100, 8, 16, 1024, 512, false, true},
		{"odd 70 tokens top3 of 6, 144→200 contiguous by ids", 70, 3, 6, 200, 144, true, true},
		{"odd 50 tokens top2 of 5, 16→136", 50, 2, 5, 136, 16, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			W, S, wf := expertWeights(t, r, true, c.mats, c.rows, c.cols)
			perm := make([]int32, c.mats)
			for i := range perm {
				perm[i] = int32(i)
			}
			if c.ids {
				r.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			}
			x := randNonZero(r, c.n*c.cols)
			g, ref := groupedCase(t, r, c.n, c.k, c.mats, c.rows, c.cols, x, func(m int) []float32 { return wf(int(perm[m])) })
			if c.ids {
				g.Ids = Whole(upload(t, perm))
			}
			if c.contiguous {
				// X as a down projection reads it: a row a pair, in order.
				ids := download(t, g.RowIds.Block, g.N)
				xs := make([]float32, 0, g.N*c.cols)
				for _, v := range ids {
					tok := int(math.Float32bits(v))
					xs = append(xs, x[tok*c.cols:(tok+1)*c.cols]...)
				}
				x, g.RowIds, g.XRows = xs, Tensor{}, 0
			}
			xb := upload(t, x)
			scratch := Whole(alloc(t, int(GemmStreamScratchBytes(g.xrows(), c.cols))))
			for _, k := range kernel.GemmStreamFP8Kernels {
				y := poisoned(t, g.N*c.rows)
				if err := dev.Run(func(q *Queue) error {
					return q.GemmStreamFP8(k, g, Whole(y), Whole(W), Whole(S), Whole(xb), scratch)
				}); err != nil {
					t.Fatal(err)
				}
				checkClose(t, fmt.Sprintf("%s (%d pairs)", k, g.N), download(t, y, g.N*c.rows), ref, 2e-5)
			}
		})
	}
}

// TestGemmStreamRefusals: what the streamed GEMM cannot take is refused
// with an error that names it, before anything runs.
func TestGemmStreamRefusals(t *testing.T) {
	y, W, S, x := Whole(alloc(t, 1<<16)), Whole(alloc(t, 1<<16)), Whole(alloc(t, 1<<12)), Whole(alloc(t, 1<<16))
	offsets := Whole(upload(t, []int32{0, 4}))
	ok := Gemm{N: 4, Rows: 64, Cols: 64, Groups: 1, Offsets: offsets, Mats: 1}
	for _, c := range []struct {
		name    string
		g       Gemm
		scratch int
	}{
		{"no groups", Gemm{N: 4, Rows: 64, Cols: 64}, 1 << 12},
		{"columns not a multiple of 16", Gemm{N: 4, Rows: 64, Cols: 40, Groups: 1, Offsets: offsets, Mats: 1}, 1 << 12},
		{"scratch too small", ok, 64},
	} {
		scratch := Whole(alloc(t, c.scratch))
		err := dev.Run(func(q *Queue) error {
			return q.GemmStreamFP8(kernel.GemmStreamFP8N8c4, c.g, y, W, S, x, scratch)
		})
		if err == nil {
			t.Errorf("%s: no error", c.name)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
}

// TestGemmStreamSpeed times one full-geometry layer's routed experts
// (top 8 of 256, FP8: gate·up 2048 → 1024 through row ids, down 512 → 2048
// contiguous) for a 60-, 300- and 700-row pass, on the grouped tile the
// fast rule picks (ChooseGemmFast: gemm32's wide families, f16p34's FP16
// parts) and on each streamed instance (its prep included), the streamed
// pick marked "*" (skipped unless PROSCENIUM_GEMM_SPEED is set). Each
// figure is the median over batches of launches between two events; TB/s
// counts the weights of the experts the routing uses, read once.
// docs/PERF.md "stream14".
func TestGemmStreamSpeed(t *testing.T) {
	if os.Getenv("PROSCENIUM_GEMM_SPEED") == "" {
		t.Skip("set PROSCENIUM_GEMM_SPEED=1 to time the streamed experts")
	}
	const batches, perBatch = 5, 8
	const E, K, P, H, I = 256, 8, 512, 2048, 512
	r := newRand(t)
	guW, guS := alloc(t, E*2*P*H), alloc(t, E*FP8ScaleCount(2*P, H)*4)
	dnW, dnS := alloc(t, E*H*I), alloc(t, E*FP8ScaleCount(H, I)*4)
	const maxN = 700
	x := alloc(t, maxN*K*H*4)
	y := alloc(t, maxN*K*H*4)
	scratch := Whole(alloc(t, int(GemmStreamScratchBytes(maxN*K, H))))
	for _, n := range []int{60, 300, 700} {
		byExpert := make([][]int32, E)
		for tok := 0; tok < n; tok++ {
			for _, e := range distinctIDs(r, K, E) {
				byExpert[e] = append(byExpert[e], int32(tok))
			}
		}
		offsets, rowIDs, used, most := []int32{0}, []int32(nil), 0, 0
		for e := 0; e < E; e++ {
			rowIDs = append(rowIDs, byExpert[e]...)
			offsets = append(offsets, int32(len(rowIDs)))
			if len(byExpert[e]) > 0 {
				used++
			}
			most = max(most, len(byExpert[e]))
		}
		off, ids := Whole(upload(t, offsets)), Whole(upload(t, rowIDs))
		nk := n * K
		gu := Gemm{N: nk, Rows: 2 * P, Cols: H, Groups: E, Offsets: off, RowIds: ids, XRows: n, MaxGroupRows: n, Mats: E}
		dn := Gemm{N: nk, Rows: H, Cols: I, Groups: E, Offsets: off, MaxGroupRows: n, Mats: E}
		picks := map[kernel.GemmStreamFP8Kernel]bool{} // the rule's pick of each GEMM
		layer := map[string]float64{}
		var layerBytes int64
		for _, c := range []struct {
			what string
			g    Gemm
			W, S *Block
		}{{"gate·up 2048→1024", gu, guW, guS}, {"down 512→2048", dn, dnW, dnS}} {
			wbytes := int64(used) * int64(c.g.Rows) * int64(c.g.Cols)
			layerBytes += wbytes
			tile := ChooseGemmFast(nk, c.g.Rows, E)
			pick, _ := ChooseGemmStream("on", nk, E)
			picks[pick] = true
			g := c.g
			g.Kernel = tile
			ms := median(t, batches, perBatch, func(q *Queue) error {
				return q.GemmFP8(g, Whole(y), Whole(c.W), Whole(c.S), Whole(x))
			})
			layer["tile"] += ms
			line := fmt.Sprintf("stream14 experts %s n=%d (%d experts, at most %d pairs): tile %s %.4f ms (%.2f TB/s)",
				c.what, n, used, most, tile, ms, float64(wbytes)/(ms*1e9))
			for _, k := range kernel.GemmStreamFP8Kernels {
				sms := median(t, batches, perBatch, func(q *Queue) error {
					return q.GemmStreamFP8(k, c.g, Whole(y), Whole(c.W), Whole(c.S), Whole(x), scratch)
				})
				layer[string(k)] += sms
				mark := ""
				if k == pick {
					mark = " *"
				}
				line += fmt.Sprintf(", %s %.4f (%.2f TB/s, %.2f×)%s", k, sms, float64(wbytes)/(sms*1e9), ms/sms, mark)
			}
			t.Log(line)
		}
		line := fmt.Sprintf("stream14 layer n=%d: tile %.4f ms (%.2f TB/s)", n, layer["tile"], float64(layerBytes)/(layer["tile"]*1e9))
		for _, k := range kernel.GemmStreamFP8Kernels {
			mark := ""
			if picks[k] {
				mark = " *"
			}
			line += fmt.Sprintf(", %s %.4f (%.2f TB/s, %.2f×)%s", k, layer[string(k)], float64(layerBytes)/(layer[string(k)]*1e9),
				layer["tile"]/layer[string(k)], mark)
		}
		t.Log(line)
	}
}

// TestGemmStreamSwiGLU: the routed experts' down projection with its input
// made by the streamed prep from the gate·up rows (GemmStreamFP8SwiGLU)
// must give, for every instance that takes the shape, the bits of the same
// instance on h made by MoESwiGLU (fast) from the same rows: the prep's
// SwiGLU is moe_swiglu_fast's to the bit. Drama 3's shape (p = i = 512, a
// 300-row pass's pairs over 256 experts) and a padded one (i 40 of p 48,
// 48 columns, the columns from i on zero); unwritten outputs are NaN.
func TestGemmStreamSwiGLU(t *testing.T) {
	withFastNumerics(t)
	r := newRand(t)
	for _, c := range []struct {
		name             string
		n, k, mats, rows int
		p, i, ip         int
	}{
		{"300 tokens top8 of 256, 512→2048", 300, 8, 256, 2048, 512, 512, 512},
		{"odd 70 tokens top3 of 6, i 40 of 48 → 136", 70, 3, 6, 136, 48, 40, 48},
	} {
		t.Run(c.name, func(t *testing.T) {
			W, S, wf := expertWeights(t, r, true, c.mats, c.rows, c.ip)
			// The pairs sorted by expert, as a pass leaves them: the down
			// projection reads its rows in that order.
			g0, _ := groupedCase(t, r, c.n, c.k, c.mats, c.rows, c.ip, make([]float32, c.n*c.ip), wf)
			nk := g0.N
			g := Gemm{N: nk, Rows: c.rows, Cols: c.ip, Groups: c.mats, Mats: c.mats, MaxGroupRows: c.n, Offsets: g0.Offsets}
			gu := upload(t, randNonZero(r, nk*2*c.p))
			h := poisoned(t, nk*c.ip)
			hs, dense := alloc(t, 4*c.ip), alloc(t, 4*(2*c.ip+8))
			if err := dev.Run(func(q *Queue) error {
				return q.MoESwiGLU(h, gu, c.p, c.i, c.ip, nk, hs, dense, 1, 2*c.ip+8, 8, c.ip/2, c.ip/2)
			}); err != nil {
				t.Fatal(err)
			}
			scratch := Whole(alloc(t, int(GemmStreamScratchBytes(nk, c.ip))))
			for _, k := range kernel.GemmStreamFP8Kernels {
				want, got := poisoned(t, nk*c.rows), poisoned(t, nk*c.rows)
				if err := dev.Run(func(q *Queue) error {
					return firstErr(q.GemmStreamFP8(k, g, Whole(want), Whole(W), Whole(S), Whole(h), scratch),
						q.GemmStreamFP8SwiGLU(k, g, Whole(got), Whole(W), Whole(S), Whole(gu), c.p, c.i, scratch))
				}); err != nil {
					t.Fatal(err)
				}
				a, b := download(t, want, nk*c.rows), download(t, got, nk*c.rows)
				for j := range a {
					if math.Float32bits(a[j]) != math.Float32bits(b[j]) || math.IsNaN(float64(b[j])) {
						t.Fatalf("%s: output %d is %g, on h %g", k, j, b[j], a[j])
					}
				}
			}
		})
	}
	// What the fused prep cannot take is refused by name.
	g := Gemm{N: 4, Rows: 128, Cols: 64, Groups: 1, Mats: 1, Offsets: Whole(upload(t, []int32{0, 4}))}
	buf := Whole(alloc(t, 1<<16))
	if err := dev.Run(func(q *Queue) error {
		return q.GemmStreamFP8SwiGLU(kernel.GemmStreamFP8N8c4, g, buf, buf, buf, buf, 16, 16, buf)
	}); err == nil || !strings.Contains(err.Error(), "SwiGLU") {
		t.Errorf("64 columns of p = 16: error %v, want a refusal naming the SwiGLU rows", err)
	}
}

//go:build cuda

package cuda

import (
	"fmt"
	"testing"
)

// TestMixerTiming prints device time per call of the mixers and the GEMM at
// Drama 3's geometry (hidden 2048; DeltaNet 16 key heads × 128, 32 value
// heads × 128, conv 4; attention 16 q / 2 kv heads × 256, rotary 64,
// θ 1e7), the mean of reps calls after one warm-up, stream-ordered with PDL
// as the backbone launches them. Figures go to docs/PERF.md; nothing is
// asserted about them.
func TestMixerTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	r := newRand(t)
	const reps = 20
	timeIt := func(what string, f func(q *Queue) error) {
		t.Helper()
		if err := dev.Run(f); err != nil { // warm-up (first launches load the kernels)
			t.Fatalf("%s: %v", what, err)
		}
		ms, err := dev.Time(func(q *Queue) error {
			for i := 0; i < reps; i++ {
				if err := f(q); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		fmt.Printf("timing %-58s %9.1f µs\n", what, 1000*ms/reps)
	}

	g := fullGeometry
	hid := g.Hidden
	const maxRows = 300
	x := Whole(upload(t, randNonZero(r, maxRows*4096))) // wide enough for the output projections
	out := Whole(alloc(t, maxRows*hid*4))

	// GEMMs.
	for _, c := range []struct{ n, rows, cols int }{
		{60, 8192, 2048}, {300, 8192, 2048}, {60, 12352, 2048}, {60, 2048, 4096}, {300, 2048, 4096}, {60, 2048, 8192},
	} {
		wh, _ := bf16Weights(r, c.rows, c.cols)
		W := Whole(upload(t, wh))
		xb := Whole(upload(t, randNonZero(r, c.n*c.cols)))
		y := Whole(alloc(t, c.n*c.rows*4))
		for _, k := range gemmKernels {
			gm := Gemm{N: c.n, Rows: c.rows, Cols: c.cols, Kernel: k}
			timeIt(fmt.Sprintf("gemm bf16 %dx%d→%d (%.0f MB) %s", c.n, c.cols, c.rows, float64(c.rows*c.cols*2)/1e6, k),
				func(q *Queue) error { return q.GemmBF16(gm, y, W, xb) })
		}
	}
	// Grouped FP8 experts: 60 tokens, top 8 of 256, [1024, 2048] (gate and
	// up stacked) and [2048, 512] (down).
	for _, c := range []struct{ n, rows, cols int }{{60, 1024, 2048}, {60, 2048, 512}, {300, 1024, 2048}} {
		const mats, k = 256, 8
		wq := tiled(randFP8(r, 1<<20), mats*c.rows*c.cols) // contents do not matter here, only the bytes read
		scales := make([]float32, mats*FP8ScaleCount(c.rows, c.cols))
		for i := range scales {
			scales[i] = 1e-3
		}
		W, S := Whole(upload(t, wq)), Whole(upload(t, scales))
		byExpert := make([][]int32, mats)
		for tok := 0; tok < c.n; tok++ {
			for _, e := range distinctIDs(r, k, mats) {
				byExpert[e] = append(byExpert[e], int32(tok))
			}
		}
		offsets := []int32{0}
		var rowIDs []int32
		for e := range byExpert {
			rowIDs = append(rowIDs, byExpert[e]...)
			offsets = append(offsets, int32(len(rowIDs)))
		}
		xb := Whole(upload(t, randNonZero(r, c.n*c.cols)))
		y := Whole(alloc(t, len(rowIDs)*c.rows*4))
		for _, kern := range gemmKernels {
			gm := Gemm{N: len(rowIDs), Rows: c.rows, Cols: c.cols, Groups: mats, Mats: mats, XRows: c.n, MaxGroupRows: c.n,
				Offsets: Whole(upload(t, offsets)), RowIds: Whole(upload(t, rowIDs)), Kernel: kern}
			timeIt(fmt.Sprintf("gemm fp8 grouped %d tok top%d/%d %d→%d %s", c.n, k, mats, c.cols, c.rows, kern),
				func(q *Queue) error { return q.GemmFP8(gm, y, W, S, xb) })
		}
	}

	dn := newDeltaNetCase(t, r, g, maxRows, true)
	dg := dn.layer.G
	dn.layer.Step = DeltaNetSplitStep
	timeIt("deltanet forward, 1 row, split step kernels",
		func(q *Queue) error { return q.DeltaNetForward(&dn.layer, out, x, 1) })
	dn.layer.Step = DeltaNetFusedStep
	timeIt("deltanet forward, 1 row, fused step kernel",
		func(q *Queue) error { return q.DeltaNetForward(&dn.layer, out, x, 1) })
	for _, n := range []int{60, 300} {
		for _, p := range deltaNetPrefills {
			dn.layer.Prefill = p.prefill
			timeIt(fmt.Sprintf("deltanet forward, %d rows, %s", n, p.name),
				func(q *Queue) error { return q.DeltaNetForward(&dn.layer, out, x, n) })
		}
		timeIt(fmt.Sprintf("deltanet chunked rule alone (intra, solve, state), %d rows", n), func(q *Queue) error {
			return q.deltaNetChunkRule(&dn.layer, dn.layer.Scratch.At(dg.scratchLayout(maxRows)),
				dn.layer.State.At(4*int64(dg.convStateFloats())), n)
		})
	}
	for _, n := range []int{1, 60, 300} {
		timeIt(fmt.Sprintf("deltanet projections only (in+out), %d rows", n), func(q *Queue) error {
			ins, inRows := dn.layer.inputProjections()
			return firstErr(q.stackedProjections(dn.layer.Scratch, ins, inRows, x, n, hid),
				q.projection(out, hid, 0, dn.layer.W.Out, x, n, hid, dg.ValueHeads*dg.ValueDim, siteOut))
		})
	}

	for _, capacity := range []int{400, 4096} {
		at := newAttentionCase(t, r, g, maxRows, capacity, true)
		// 60 cached rows, then one step (position reset after each rep).
		if err := dev.Run(func(q *Queue) error { return at.forward(q, out.Block, x.Block, 60, 60) }); err != nil {
			t.Fatal(err)
		}
		ag := at.layer.G
		w := at.layer.W
		timeIt(fmt.Sprintf("attention step after 60 rows, capacity %d", capacity), func(q *Queue) error {
			return firstErr(at.forward(q, out.Block, x.Block, 1, 0), q.AddInt32(Whole(at.pos), -1))
		})
		if capacity != 400 {
			continue
		}
		timeIt("attention projections only (qkv+o), 1 row", func(q *Queue) error {
			return firstErr(q.stackedProjections(at.layer.Scratch, []Tensor{w.Q, w.K, w.V},
				[]int{2 * ag.Heads * ag.HeadDim, ag.KVHeads * ag.HeadDim, ag.KVHeads * ag.HeadDim}, x, 1, hid),
				q.projection(out, hid, 0, w.O, x, 1, hid, ag.Heads*ag.HeadDim, siteOut))
		})
		if err := dev.Run(func(q *Queue) error { return q.AddInt32(Whole(at.pos), -60) }); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{60, 300} {
			timeIt(fmt.Sprintf("attention prefill %d rows from empty", n), func(q *Queue) error {
				return firstErr(at.forward(q, out.Block, x.Block, n, n), q.AddInt32(Whole(at.pos), -n))
			})
			timeIt(fmt.Sprintf("attention projections only (qkv+o), %d rows", n), func(q *Queue) error {
				return firstErr(q.stackedProjections(at.layer.Scratch, []Tensor{w.Q, w.K, w.V},
					[]int{2 * ag.Heads * ag.HeadDim, ag.KVHeads * ag.HeadDim, ag.KVHeads * ag.HeadDim}, x, n, hid),
					q.projection(out, hid, 0, w.O, x, n, hid, ag.Heads*ag.HeadDim, siteOut))
			})
		}
	}
	timeIt("launch floor (empty kernel)", func(q *Queue) error { return q.LaunchFloor() })
}

// tiled repeats pattern to n elements.
func tiled[T any](pattern []T, n int) []T {
	out := make([]T, n)
	for i := 0; i < n; i += len(pattern) {
		copy(out[i:], pattern)
	}
	return out
}

//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/cuda/kernel"
)

// gemmStreamFor is the streamed instance of grouped GEMM g of FP8 weights,
// or ok false where gemm.cu's grouped tiles run it: exact numerics, the
// streamed kernels off, columns they do not take, or scratch too small.
func (q *Queue) gemmStreamFor(g Gemm, scratchBytes int64) (kernel.GemmStreamFP8Kernel, bool, error) {
	if err := GemmStreamSetting(gemmStream); err != nil {
		return "", false, err
	}
	if q.d.Numerics.Exact() || g.Groups == 0 || g.Kernel != "" || !gemmStreamFits(g.Cols) ||
		GemmStreamScratchBytes(g.xrows(), g.Cols) > scratchBytes {
		return "", false, nil
	}
	k, ok := ChooseGemmStream(gemmStream, g.N, g.Groups)
	return k, ok, nil
}

// GemmFP8Grouped runs grouped GEMM g of E4M3 weights (GemmFP8's contract)
// by the streamed kernels where gemmStreamFor takes it, with scratch (of
// scratchBytes) for the X parts, else by GemmFP8.
func (q *Queue) GemmFP8Grouped(g Gemm, y, W, S, x, scratch Tensor, scratchBytes int64) error {
	k, ok, err := q.gemmStreamFor(g, scratchBytes)
	if err != nil {
		return err
	}
	if !ok {
		return q.GemmFP8(g, y, W, S, x)
	}
	return q.GemmStreamFP8(k, g, y, W, S, x, scratch)
}

// GemmStreamFP8 runs grouped GEMM g of E4M3 weights by streamed instance k:
// gemm_stream_prep writes X's parts into scratch (GemmStreamScratchBytes),
// then k multiplies them. Fast numerics (the tests run it under either
// policy's device: it has one).
func (q *Queue) GemmStreamFP8(k kernel.GemmStreamFP8Kernel, g Gemm, y, W, S, x, scratch Tensor) error {
	if err := g.check("fp8", 1, y, W, x); err != nil {
		return err
	}
	return q.gemmStreamFP8(k, g, y, W, S, scratch, func(parts, inv Tensor, grid [3]int) error {
		return kernel.GemmStreamPrep(q, grid, kernel.GemmStreamPrepThreads, tPtr(parts), tPtr(inv), tPtr(x),
			g.xrows(), g.Cols, g.xstride())
	})
}

// GemmStreamFP8SwiGLU is GemmStreamFP8 with X the SwiGLU of the gate·up rows
// gu (pitch 2p: gate at 0, up at p; i columns of each, zero up to g.Cols),
// moe_swiglu_fast's h to the bit, which the prep makes as it splits it: the
// routed experts' down projection without h (gemm_stream_prep_swiglu).
// X is contiguous: g has no row ids; p is a multiple of 8 (the prep's
// 16-byte loads of 8 gate and 8 up values).
func (q *Queue) GemmStreamFP8SwiGLU(k kernel.GemmStreamFP8Kernel, g Gemm, y, W, S, gu Tensor, p, i int, scratch Tensor) error {
	if g.RowIds.Block != nil || g.XStride != 0 || i > p || i > g.Cols || g.Cols > 2*p || p%8 != 0 {
		return fmt.Errorf("cuda: streamed fp8 gemm on SwiGLU rows: want contiguous rows, p %d a multiple of 8, i %d ≤ p and i ≤ %d columns ≤ 2p", p, i, g.Cols)
	}
	gx := g
	gx.XStride = 2 * p // the gate·up rows the prep reads
	if err := gx.check("fp8", 1, y, W, gu); err != nil {
		return err
	}
	return q.gemmStreamFP8(k, g, y, W, S, scratch, func(parts, inv Tensor, grid [3]int) error {
		return kernel.GemmStreamPrepSwiGLU(q, grid, kernel.GemmStreamPrepThreads, tPtr(parts), tPtr(inv), tPtr(gu),
			g.N, g.Cols, 2*p, p, i)
	})
}

// gemmStreamFP8 checks what the streamed kernels need of g (Gemm.check
// done) and the scratch, runs prep (the X parts into parts and their scales
// into inv, on grid), then instance k.
func (q *Queue) gemmStreamFP8(k kernel.GemmStreamFP8Kernel, g Gemm, y, W, S, scratch Tensor, prep func(parts, inv Tensor, grid [3]int) error) error {
	if g.Groups == 0 {
		return fmt.Errorf("cuda: streamed fp8 gemm: %d rows without groups", g.N)
	}
	if _, ok := gemmStreamNT[k]; !ok {
		return fmt.Errorf("cuda: streamed fp8 gemm: no instance %q", k)
	}
	if !gemmStreamFits(g.Cols) {
		return fmt.Errorf("cuda: streamed fp8 gemm: %d columns is not a multiple of 16", g.Cols)
	}
	ns := FP8ScaleCount(g.Rows, g.Cols)
	xrows := g.xrows()
	need := GemmStreamScratchBytes(xrows, g.Cols)
	if err := firstErr(S.fits(int64(max(g.Mats, 1)*ns*4), "fp8 gemm scales"),
		scratch.fits(need, "streamed gemm scratch")); err != nil {
		return err
	}
	if scratch.addr()%16 != 0 {
		return fmt.Errorf("cuda: streamed fp8 gemm: scratch must be 16-byte aligned")
	}
	nb := (g.Cols + 127) / 128
	parts := scratch
	inv := Tensor{Block: scratch.Block, Off: scratch.Off + int64(xrows)*int64(nb)*kernel.GemmStreamBlockBytes}
	chunks := xrows * nb * 16
	blocks := min((chunks+kernel.GemmStreamPrepThreads-1)/kernel.GemmStreamPrepThreads, 65535)
	if err := prep(parts, inv, [3]int{blocks, 1, 1}); err != nil {
		return err
	}
	grid := [3]int{1, (g.Rows + kernel.GemmStreamRows - 1) / kernel.GemmStreamRows, g.Groups}
	return kernel.GemmStreamFP8(sharedLauncher{q, GemmStreamShared(k)}, k, grid, kernel.GemmStreamThreads, tPtr(y), tPtr(W), tPtr(S), tPtr(parts), tPtr(inv),
		int64(g.Rows)*int64(g.Cols), int64(ns), g.Rows, g.Cols, g.ystride(), tPtr(g.Offsets), tPtr(g.Ids), tPtr(g.RowIds))
}

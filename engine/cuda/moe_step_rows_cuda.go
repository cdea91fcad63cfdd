//go:build cuda

package cuda

import "proscenium/engine/cuda/kernel"

// MoEDownRows is MoEDown for the n rows of a B-row step (kernels/moe.cu
// moe_down_rows): row t's k routed down projections (ids and gu rows t·k …,
// SwiGLU inside) into yr rows t·k … t·k+k−1 [n·k, h], and its shared
// expert's (from the stacked projection's row t, pitch dstride floats) into
// ys row t [n, h], in one launch; each item has the one-row kernel's bits.
func (q *Queue) MoEDownRows(yr, ys, W, S *Block, wOff, sOff int64, fp8 bool, E int, ids, gu *Block, p, i, ip, k int, Ws, dense *Block, dstride, e, is, h, n int, xr ExpertRef) error {
	// The one-row checks on row 0's views (widths, weights, scales), then the n rows' extents.
	a, grid, err := moeDownArgs(yr, W, S, wOff, sOff, fp8, E, ids, gu, p, i, ip, k, Ws, dense, e, is, h)
	if err != nil {
		return err
	}
	if err := firstErr(checkFits(yr, 0, int64(n*k*h*4), "moe down rows y"), checkFits(ys, 0, int64(n*h*4), "moe down rows shared y"),
		checkFits(ids, 0, int64(n*k*4), "moe down rows ids"), checkFits(gu, 0, int64(n*k*2*p*4), "moe down rows gate/up"),
		checkFits(dense, 0, int64(((n-1)*dstride+e+2*is)*4), "moe down rows shared gate/up")); err != nil {
		return err
	}
	grid[2] = n
	return kernel.MoEDownRows(q, q.policy(), grid, moeDownThreads, kernel.MoEDownRowsArgs{
		Yr: a.Yr, Ys: devPtr(ys), W: a.W, S: a.S, Mstride: a.Mstride, Sstride: a.Sstride, FP8: a.FP8, Ids: a.Ids, Gu: a.Gu,
		P: p, I: i, Ip: ip, K: k, Ws: a.Ws, Dense: a.Dense, Dstride: dstride, E: e, Is: is, H: h, Xt: xr.down(), Xst: xr.Stats})
}

//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"os"

	"proscenium/engine/cuda/kernel"
)

// MoEDownRows is MoEDown for the n rows of a B-row step (kernels/moe.cu
// moe_down_rows): row t's k routed down projections (ids and gu rows t·k …,
// SwiGLU inside) into yr rows t·k … t·k+k−1 [n·k, h], and its shared
// expert's (from the stacked projection's row t, pitch dstride floats) into
// ys row t [n, h], in one launch; each item has the one-row kernel's bits.
// With moeDown2 (the default) it runs moe_down2 (MoEDown2Rows).
func (q *Queue) MoEDownRows(yr, ys, W, S *Block, wOff, sOff int64, fp8 bool, E int, ids, gu *Block, p, i, ip, k int, Ws, dense *Block, dstride, e, is, h, n int, xr ExpertRef) error {
	return q.moeDownRows(false, yr, ys, W, S, wOff, sOff, fp8, E, ids, gu, p, i, ip, k, Ws, dense, dstride, e, is, h, n, xr)
}

// moeDownRows is MoEDownRows; idsBefore says the ids are moe_route's behind
// a gate·up by ids, the launch just before (MoEGateUpRoute's split path),
// so the tensor-core down may read them before its PDL wait
// (moe_down2_mma_ahead_fast, where moeDownAhead says).
func (q *Queue) moeDownRows(idsBefore bool, yr, ys, W, S *Block, wOff, sOff int64, fp8 bool, E int, ids, gu *Block, p, i, ip, k int, Ws, dense *Block, dstride, e, is, h, n int, xr ExpertRef) error {
	if moeDown2 {
		a, grid, err := moeDownRowsArgs(yr, ys, W, S, wOff, sOff, fp8, E, ids, gu, p, i, ip, k, Ws, dense, dstride, e, is, h, n)
		if err != nil {
			return err
		}
		return q.moeDown2(a, devPtr(ys), dstride, n, grid[0], xr, idsBefore)
	}
	a, grid, err := moeDownRowsArgs(yr, ys, W, S, wOff, sOff, fp8, E, ids, gu, p, i, ip, k, Ws, dense, dstride, e, is, h, n)
	if err != nil {
		return err
	}
	grid[2] = n
	return kernel.MoEDownRows(q, q.policy(), grid, moeDownThreads, kernel.MoEDownRowsArgs{
		Yr: a.Yr, Ys: devPtr(ys), W: a.W, S: a.S, Mstride: a.Mstride, Sstride: a.Sstride, FP8: a.FP8, Ids: a.Ids, Gu: a.Gu,
		P: p, I: i, Ip: ip, K: k, Ws: a.Ws, Dense: a.Dense, Dstride: dstride, E: e, Is: is, H: h, Xt: xr.down(), Xst: xr.Stats})
}

// moeDownRowsArgs checks MoEDownRows' buffers: the one-row checks on row
// 0's views (widths, weights, scales), then the n rows' extents.
func moeDownRowsArgs(yr, ys, W, S *Block, wOff, sOff int64, fp8 bool, E int, ids, gu *Block, p, i, ip, k int, Ws, dense *Block, dstride, e, is, h, n int) (kernel.MoEDownArgs, [3]int, error) {
	a, grid, err := moeDownArgs(yr, W, S, wOff, sOff, fp8, E, ids, gu, p, i, ip, k, Ws, dense, e, is, h)
	if err != nil {
		return a, grid, err
	}
	return a, grid, firstErr(checkFits(yr, 0, int64(n*k*h*4), "moe down rows y"), checkFits(ys, 0, int64(n*h*4), "moe down rows shared y"),
		checkFits(ids, 0, int64(n*k*4), "moe down rows ids"), checkFits(gu, 0, int64(n*k*2*p*4), "moe down rows gate/up"),
		checkFits(dense, 0, int64(((n-1)*dstride+e+2*is)*4), "moe down rows shared gate/up"))
}

// moeDown2: a step's down projections (MoEDown, MoEDownRows) by moe_down2,
// the weight loads issued before the SwiGLU staging and the shared expert
// read once for up to four rows (docs/PERF.md "moe32"); the same bits as
// moe_down. The default since session 11's run 2 (the step of four takes
// 3.99 → 3.84 ms); $PROSCENIUM_GPU_MOE_DOWN2=0 runs moe_down.
var moeDown2 = os.Getenv("PROSCENIUM_GPU_MOE_DOWN2") != "0"

// moeDownMMA: under fast, a B-row step's (n ≥ 2) routed FP8 down
// projections of Drama 3's width (512 columns) on the tensor cores
// (moe_down2_mma_fast; the shared expert as moe_down2_fast; docs/PERF.md
// "mma22": the step 3.346 → 3.296 ms at four rows, 5.125 → 4.984 at eight;
// at one row 1.981 → 1.999, so the one-take step keeps moe_down2_fast);
// $PROSCENIUM_GPU_MOE_DOWN_MMA=0 keeps moe_down2_fast's SIMT sums at every width.
var moeDownMMA = os.Getenv("PROSCENIUM_GPU_MOE_DOWN_MMA") != "0"

// moeDownAhead: a B-row step's tensor-core down projections read their
// pairs' expert ids, weights and scales before the PDL wait
// (moe_down2_mma_ahead_fast; docs/PERF.md "ahead25"), where the ids are
// moe_route's behind a gate·up by ids; $PROSCENIUM_GPU_MOE_DOWN_AHEAD=0
// loads them after it (moe_down2_mma_fast), the same bits.
var moeDownAhead = os.Getenv("PROSCENIUM_GPU_MOE_DOWN_AHEAD") != "0"

// MoEDown2Rows is MoEDownRows by moe_down2 whatever $PROSCENIUM_GPU_MOE_DOWN2
// says (the tests' and benchmarks' A/B): the same outputs, bit for bit, but
// where moeDownMMA puts the routed sums on the tensor cores (fast, n ≥ 2).
func (q *Queue) MoEDown2Rows(yr, ys, W, S *Block, wOff, sOff int64, fp8 bool, E int, ids, gu *Block, p, i, ip, k int, Ws, dense *Block, dstride, e, is, h, n int, xr ExpertRef) error {
	a, grid, err := moeDownRowsArgs(yr, ys, W, S, wOff, sOff, fp8, E, ids, gu, p, i, ip, k, Ws, dense, dstride, e, is, h, n)
	if err != nil {
		return err
	}
	return q.moeDown2(a, devPtr(ys), dstride, n, grid[0], xr, false)
}

// moeDown2 launches moe_down2 (or, where moeDownMMA applies,
// moe_down2_mma_fast: the same signature and grid) on checked arguments:
// grid (blocks of 64 output rows, k routed pairs + the shared expert's two
// halves, n rows). idsBefore: moeDownRows'.
func (q *Queue) moeDown2(a kernel.MoEDownArgs, ys kernel.Ptr, dstride, n, blocks int, xr ExpertRef, idsBefore bool) error {
	elem := int64(2)
	if a.FP8 != 0 {
		elem = 1
	}
	// The kernel's offsets within a matrix are int: each < 2³¹ bytes.
	if int64(a.H)*int64(a.Ip)*elem > math.MaxInt32 || int64(a.H)*int64(a.Is)*2 > math.MaxInt32 || a.Is < 8 {
		return fmt.Errorf("cuda: moe down2: matrices [%d, %d] and [%d, %d] (each under 2 GiB, shared width ≥ 8)", a.H, a.Ip, a.H, a.Is)
	}
	grid, args := [3]int{blocks, a.K + 2, n}, kernel.MoEDown2Args{
		Yr: a.Yr, Ys: ys, W: a.W, S: a.S, Mstride: a.Mstride, Sstride: a.Sstride, FP8: a.FP8, Ids: a.Ids, Gu: a.Gu,
		P: a.P, I: a.I, Ip: a.Ip, K: a.K, Ws: a.Ws, Dense: a.Dense, Dstride: dstride, E: a.E, Is: a.Is, H: a.H,
		Xt: xr.down(), Xst: xr.Stats}
	if q.policy() == kernel.Fast && moeDownMMA && n >= 2 && a.FP8 != 0 && a.Ip == kernel.DownMmaK && a.I <= a.Ip {
		if idsBefore && moeDownAhead {
			return kernel.MoEDown2MmaAheadFast(q, grid, moeDownThreads, kernel.MoEDown2MmaAheadFastArgs(args))
		}
		return kernel.MoEDown2MmaFast(q, grid, moeDownThreads, kernel.MoEDown2MmaFastArgs(args)) // moe_down2's signature
	}
	return kernel.MoEDown2(q, q.policy(), grid, moeDownThreads, args)
}

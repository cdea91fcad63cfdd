//go:build cuda

package cuda

import (
	"fmt"
	"os"

	"proscenium/engine/cuda/kernel"
)

// moeRows34GateUp and moeRows34Down: $PROSCENIUM_GPU_MOE_ROWS (rows34Modes)
// at start. Off by default; the default flips in one line, moeRows34Default
// in moe_rows34.go.
var moeRows34GateUp, moeRows34Down = rows34Modes(os.Getenv("PROSCENIUM_GPU_MOE_ROWS"), moeRows34Default)

// rows34Device reports whether the device gives a block the kernels'
// shared memory (the ring's 136 KB, the gate·up's x up to 64 KB more):
// Hopper (sm_90, 227 KB) and the datacenter Blackwells (sm_100, sm_103);
// sm_80 has 163 KB, sm_86/89/120 about 100. Elsewhere the old kernels run.
func (q *Queue) rows34Device() bool { return q.d.Info.Major == 9 || q.d.Info.Major == 10 }

// rows34Grid is the persistent kernels' grid: one block (16 warps) an SM.
func (q *Queue) rows34Grid() [3]int {
	sms := q.d.Info.Multiprocs
	if sms <= 0 {
		sms = gemmSMs
	}
	return [3]int{sms, 1, 1}
}

// MoERows34GateUp runs moe_rows34_gate_up: gu [n·k, rows] = the gate·up
// projections of the n·k (row, expert) pairs of ids (row t = pair / k, x row
// t at pitch xpitch), the FP8 matrices [rows, 2048] at W + wOff (mstride
// bytes apart, scales at S + sOff sstride apart) or where the expert table
// xt says. Fast only; the caller checks the buffers (MoEGateUpRoute) and
// the shape (rows34GateUpFits).
func (q *Queue) MoERows34GateUp(gu, ids, W, S *Block, wOff, sOff int64, n, k, rows, cols int, x *Block, xpitch int, xt kernel.Ptr) error {
	if q.d.Numerics.Exact() || !q.rows34Device() || !rows34GateUpFits(n, k, rows, cols, xpitch) {
		return fmt.Errorf("cuda: moe rows34 gate·up: %d rows of top-%d, [%d, %d] matrices, x pitch %d (fast, sm_90/100, n > 1, n·k ≤ 64, 2048 inputs, rows a multiple of 16)", n, k, rows, cols, xpitch)
	}
	l := sharedLauncher{q.Queue, kernel.R34RingBytes + n*kernel.R34GuCols*4}
	grid := q.rows34Grid()
	return kernel.MoERows34GateUp(l, grid, kernel.R34Threads, devPtr(gu), devPtr(ids), devPtr(W).Add(wOff),
		devPtr(S).Add(sOff), int64(rows)*int64(cols), int64(FP8ScaleCount(rows, cols)), devPtr(x), xpitch, n, k, rows,
		rows34Tile8(rows, n*k, grid[0]*kernel.R34Warps), xt)
}

// MoERows34DownRows is MoEDownRows by moe_rows34_down whatever
// $PROSCENIUM_GPU_MOE_ROWS says (the tests' and benchmarks' A/B): the same
// outputs yr [n·k, h] and ys [n, h] within float32 rounding of moe_down2's.
// Fast, FP8 routed experts, rows34DownFits' shapes.
func (q *Queue) MoERows34DownRows(yr, ys, W, S *Block, wOff, sOff int64, fp8 bool, E int, ids, gu *Block, p, i, ip, k int, Ws, dense *Block, dstride, e, is, h, n int, xr ExpertRef) error {
	if !fp8 || q.d.Numerics.Exact() || !q.rows34Device() || !rows34DownFits(n, k, h, p, i, ip, is) {
		return fmt.Errorf("cuda: moe rows34 down: %d rows of top-%d, [%d, %d] experts (FP8: %v), shared width %d, p %d, i %d (fast FP8, sm_90/100, n > 1, n·k ≤ 64, 512 wide)", n, k, h, ip, fp8, is, p, i)
	}
	a, _, err := moeDownRowsArgs(yr, ys, W, S, wOff, sOff, fp8, E, ids, gu, p, i, ip, k, Ws, dense, dstride, e, is, h, n)
	if err != nil {
		return err
	}
	l := sharedLauncher{q.Queue, kernel.R34RingBytes}
	return kernel.MoERows34Down(l, q.rows34Grid(), kernel.R34Threads, kernel.MoERows34DownArgs{
		Yr: a.Yr, Ys: devPtr(ys), W: a.W, S: a.S, Mstride: a.Mstride, Sstride: a.Sstride, Ids: a.Ids, Gu: a.Gu,
		P: p, I: i, N: n, K: k, Ws: a.Ws, Dense: a.Dense, Dstride: dstride, E: e, H: h, Xt: xr.down(), Xst: xr.Stats})
}

// MoERowsNote names the rows34 launches a fast B-row step of Drama 3's
// widths runs under $PROSCENIUM_GPU_MOE_ROWS ("": none), for the
// benchmarks' reports.
func MoERowsNote() string {
	switch {
	case moeRows34GateUp && moeRows34Down:
		return "+rows34 gate·up and down"
	case moeRows34GateUp:
		return "+rows34 gate·up"
	case moeRows34Down:
		return "+rows34 down"
	}
	return ""
}

// SetMoERows sets $PROSCENIUM_GPU_MOE_ROWS's two switches for later
// launches and returns the previous ones (an A/B in one process: tests,
// benchmarks). A captured B-row graph keeps the kernels it was captured
// with: Backbone.SetStepExperts drops them.
func SetMoERows(gateUp, down bool) (prevGateUp, prevDown bool) {
	prevGateUp, prevDown = moeRows34GateUp, moeRows34Down
	moeRows34GateUp, moeRows34Down = gateUp, down
	return
}

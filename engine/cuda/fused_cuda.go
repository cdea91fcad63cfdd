//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/cuda/kernel"
)

// Launches of the fused step's kernels (fused.go; kernels/fused.cuh). Each
// runs under fast numerics only, checks its buffers as the launches it
// replaces do, and takes a zero uint32 counter that it leaves zero.

// fusedGemv is the GEMV instance the fused kernels run (kernels/fused.cuh):
// the one ChooseGemv picks for the step's BF16 projections they replace.
var fusedGemv = GemvVariant{TPR: kernel.FusedGemvTpr, Rows: kernel.FusedGemvRows, Unroll: kernel.FusedGemvUnroll}

// checkFused refuses a fused launch under exact numerics (its kernels are
// Fast instances) and checks the shared parts of a fused GEMV.
func (q *Queue) checkFused(what string, W, in, y, counter *Block, rows, cols int) error {
	if q.d.Numerics.Exact() {
		return fmt.Errorf("cuda: %s: the fused kernels run under fast numerics only", what)
	}
	if rows < 1 || cols < 8 || cols%8 != 0 {
		return fmt.Errorf("cuda: %s: bad shape %d×%d (columns a positive multiple of 8)", what, rows, cols)
	}
	return firstErr(checkFits(W, 0, int64(rows)*int64(cols)*2, what+" weights"), checkFits(in, 0, int64(cols)*4, what+" x"),
		checkFits(y, 0, int64(rows)*4, what+" y"), checkFits(counter, 0, 4, what+" counter"))
}

// OutAddNorm is a mixer's output projection y = W·in (W [rows, cols] BF16,
// rows the hidden width) with the residual and the post norm after it:
// x += y, normed = the zero-centred RMSNorm of x with gain nw (pitch npitch,
// zero-padded) — GemvBF16 then AddRMSNormZC of one row, in one launch.
func (q *Queue) OutAddNorm(y, W, in, x, normed, nw, counter *Block, rows, cols, npitch int, eps float32) error {
	errs := []error{q.checkFused("out-add-norm", W, in, y, counter, rows, cols),
		checkFits(x, 0, int64(rows)*4, "out-add-norm residual"), checkFits(normed, 0, int64(npitch)*4, "out-add-norm normed"),
		checkFits(nw, 0, int64(rows)*4, "out-add-norm norm weight")}
	if npitch < rows {
		errs = append(errs, fmt.Errorf("cuda: out-add-norm: pitch %d < width %d", npitch, rows))
	}
	if err := firstErr(errs...); err != nil {
		return err
	}
	blocks, _ := fusedGemv.Grid(rows)
	return kernel.GemvBF16AddNormFast(q, [3]int{blocks, 1, 1}, gemvThreads, devPtr(y), devPtr(W), devPtr(in), rows, cols,
		devPtr(counter), devPtr(x), devPtr(normed), devPtr(nw), npitch, eps)
}

// DenseRoute is a step's stacked dense projection dense = W·x (W [rows,
// cols] BF16) with the routing of its first E outputs into ids and wts [k]
// — GemvBF16 then MoERoute of one row, in one launch.
func (q *Queue) DenseRoute(dense, W, x, ids, wts, counter *Block, rows, cols, E, k int) error {
	if E > maxRouteExperts || k > maxRouteTopK || k > E || k < 1 || E > rows {
		return fmt.Errorf("cuda: dense-route: %d experts top-%d of %d outputs (at most %d experts, top-%d)", E, k, rows, maxRouteExperts, maxRouteTopK)
	}
	if err := firstErr(q.checkFused("dense-route", W, x, dense, counter, rows, cols),
		checkFits(ids, 0, int64(k*4), "dense-route ids"), checkFits(wts, 0, int64(k*4), "dense-route weights")); err != nil {
		return err
	}
	blocks, _ := fusedGemv.Grid(rows)
	return kernel.GemvBF16RouteFast(q, [3]int{blocks, 1, 1}, gemvThreads, devPtr(dense), devPtr(W), devPtr(x), rows, cols,
		devPtr(counter), devPtr(ids), devPtr(wts), E, k)
}

// DownCombine is MoEDown's arguments (a step's routed and shared down
// projections into Yr [K+1, H]) and MoECombineNorm's of the one row after
// it: X += Σ_j Wts[j]·Yr[j] + sigmoid(Dense[SGCol])·Yr[K], Normed = the next
// zero-centred RMSNorm of X with gain NW (pitch NPitch).
type DownCombine struct {
	Yr, W, S         *Block
	WOff, SOff       int64
	FP8              bool
	Experts          int // matrices in W from WOff
	Ids, GU          *Block
	P, I, Ip, K      int
	Ws, Dense        *Block
	SharedCol, Is, H int // SharedCol: the shared gate's first column in Dense
	X, Wts           *Block
	SGCol            int // the shared_expert_gate logit's column in Dense
	Normed, NW       *Block
	NPitch           int
	Eps              float32
	Counter          *Block
	XR               ExpertRef // the expert cache's table and statistics (zero: the packed layout)
}

// MoEDownCombine runs MoEDown then MoECombineNorm of one row in one launch.
func (q *Queue) MoEDownCombine(c DownCombine) error {
	if q.d.Numerics.Exact() {
		return fmt.Errorf("cuda: down-combine: the fused kernels run under fast numerics only")
	}
	a, grid, err := moeDownArgs(c.Yr, c.W, c.S, c.WOff, c.SOff, c.FP8, c.Experts, c.Ids, c.GU, c.P, c.I, c.Ip, c.K, c.Ws, c.Dense,
		c.SharedCol, c.Is, c.H)
	if err != nil {
		return err
	}
	errs := []error{checkFits(c.X, 0, int64(c.H*4), "down-combine x"), checkFits(c.Wts, 0, int64(c.K*4), "down-combine weights"),
		checkFits(c.Dense, 0, int64(c.SGCol+1)*4, "down-combine shared gate"), checkFits(c.Normed, 0, int64(c.NPitch*4), "down-combine normed"),
		checkFits(c.NW, 0, int64(c.H*4), "down-combine norm weight"), checkFits(c.Counter, 0, 4, "down-combine counter")}
	if c.NPitch < c.H {
		errs = append(errs, fmt.Errorf("cuda: down-combine: pitch %d < width %d", c.NPitch, c.H))
	}
	if err := firstErr(errs...); err != nil {
		return err
	}
	return kernel.MoEDownCombineFast(q, grid, moeDownThreads, kernel.MoEDownCombineFastArgs{
		Yr: a.Yr, W: a.W, S: a.S, Mstride: a.Mstride, Sstride: a.Sstride, FP8: a.FP8, Ids: a.Ids, Gu: a.Gu,
		P: a.P, I: a.I, Ip: a.Ip, K: a.K, Ws: a.Ws, Dense: a.Dense, E: a.E, Is: a.Is, H: a.H,
		X: devPtr(c.X), Wts: devPtr(c.Wts), Sgcol: c.SGCol, Normed: devPtr(c.Normed), Nw: devPtr(c.NW), Npitch: c.NPitch,
		Eps: c.Eps, Counter: devPtr(c.Counter), Xt: c.XR.down(), Xst: c.XR.Stats})
}

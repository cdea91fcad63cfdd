//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/cuda/kernel"
)

// Launches of kernels/moe_rows.cu: a prefill's routed experts as multi-row
// gathered GEMVs over the (row, expert) pairs sorted by expert (MoEGroup),
// each expert's weights read once per group of its pairs. Under exact
// numerics their sums follow rule 1 of the numerics contract (docs/MODEL.md),
// as the GEMVs' float64 instances do; under fast they are float32 fused
// multiply-adds (the _f instances, named by format as the GEMVs' are).

// moeRowsThreads is moe_rows' block (8 warps).
const moeRowsThreads = kernel.MoERowsThreads

// MoERows is one multi-row gathered projection: for every expert e < E and
// sorted pair s of it (Offsets[e] ≤ s < Offsets[e+1], Pairs in all),
// y[s] = W_e · x_s, W_e [Rows, Cols] the e-th matrix from byte WOff of the
// weights (FP8: its block scales the e-th set from byte SOff of S), x_s the
// row RowIds[s] of x (XRows rows; RowIds nil: row s of Pairs rows), pitch
// XStride. Group is the pairs dotted per pass over W_e (4 or 8).
type MoERows struct {
	Rows, Cols, E, Pairs, XRows, XStride, Group int
	WOff, SOff                                  int64
	FP8                                         bool
	Offsets, RowIds                             *Block
}

// moeRowsGroups are the compiled pairs per pass.
var moeRowsGroups = []int{4, 8}

// MoERowsGroup picks the pairs per pass for pairs over E experts: the
// smallest compiled group holding the mean pairs per expert.
func MoERowsGroup(pairs, E int) int {
	for _, g := range moeRowsGroups {
		if pairs <= g*E {
			return g
		}
	}
	return moeRowsGroups[len(moeRowsGroups)-1]
}

// variant is the kernel instance (rows per warp, unroll) for the shape, as
// compiled in kernels/moe_rows.cu.
func (m MoERows) variant() (rows, unroll int) {
	switch {
	case !m.FP8 && m.Group == 8:
		return 2, 1
	case !m.FP8:
		return 2, 2
	case m.Cols <= 512 && m.Group == 8:
		return 4, 1
	case m.Cols <= 512:
		return 8, 1
	}
	return 4, 2
}

// MoERowsGEMV enqueues m into y [Pairs, Rows] (float32, sorted order) from
// the weights W (and FP8 scales S) and x.
func (q *Queue) MoERowsGEMV(m MoERows, y, W, S, x *Block) error {
	per, elem, kind := 8, int64(2), "bf16"
	if m.FP8 {
		per, elem, kind = 16, 1, "fp8"
	}
	switch {
	case m.Rows <= 0 || m.Cols <= 0 || m.E <= 0 || m.Pairs <= 0:
		return fmt.Errorf("cuda: %s moe rows: bad shape %+v", kind, m)
	case m.Cols%per != 0:
		return fmt.Errorf("cuda: %s moe rows: %d columns is not a multiple of %d", kind, m.Cols, per)
	case m.XStride%4 != 0 || m.XStride < m.Cols:
		return fmt.Errorf("cuda: %s moe rows: x's pitch %d is not a multiple of 4 at least the %d columns", kind, m.XStride, m.Cols)
	case m.RowIds != nil && m.XRows <= 0:
		return fmt.Errorf("cuda: %s moe rows: row ids over %d rows of x", kind, m.XRows)
	case m.Group != 4 && m.Group != 8:
		return fmt.Errorf("cuda: %s moe rows: %d pairs per pass (compiled: %v)", kind, m.Group, moeRowsGroups)
	case m.Offsets == nil:
		return fmt.Errorf("cuda: %s moe rows: no group offsets", kind)
	}
	xrows := m.Pairs
	if m.RowIds != nil {
		xrows = m.XRows
	}
	errs := []error{
		checkFits(W, m.WOff, int64(m.E)*int64(m.Rows)*int64(m.Cols)*elem, kind+" moe rows weights"),
		checkFits(x, 0, ((int64(xrows)-1)*int64(m.XStride)+int64(m.Cols))*4, kind+" moe rows x"),
		checkFits(y, 0, int64(m.Pairs)*int64(m.Rows)*4, kind+" moe rows y"),
		checkFits(m.Offsets, 0, int64(m.E+1)*4, kind+" moe rows offsets"),
	}
	if m.RowIds != nil {
		errs = append(errs, checkFits(m.RowIds, 0, int64(m.Pairs)*4, kind+" moe rows row ids"))
	}
	ns := int64(FP8ScaleCount(m.Rows, m.Cols))
	if m.FP8 {
		errs = append(errs, checkFits(S, m.SOff, int64(m.E)*ns*4, kind+" moe rows scales"))
	}
	if err := firstErr(errs...); err != nil {
		return err
	}
	rows, unroll := m.variant()
	rb := moeRowsThreads / 32 * rows
	grid := [3]int{(m.Rows + rb - 1) / rb, m.E, 1}
	fast := !q.d.Numerics.Exact()
	format := kind
	if fast {
		format += "f"
	}
	name := fmt.Sprintf("moe_rows_%s_g%dr%du%d", format, m.Group, rows, unroll)
	mstride := int64(m.Rows) * int64(m.Cols)
	switch {
	case m.FP8 && fast:
		return kernel.MoERowsFP8f(q, kernel.MoERowsFP8fKernel(name), grid, moeRowsThreads, devPtr(y), devPtr(W).Add(m.WOff),
			devPtr(S).Add(m.SOff), devPtr(x), devPtr(m.Offsets), devPtr(m.RowIds), mstride, ns, m.XStride, m.Rows, m.Cols)
	case m.FP8:
		return kernel.MoERowsFP8(q, kernel.MoERowsFP8Kernel(name), grid, moeRowsThreads, devPtr(y), devPtr(W).Add(m.WOff),
			devPtr(S).Add(m.SOff), devPtr(x), devPtr(m.Offsets), devPtr(m.RowIds), mstride, ns, m.XStride, m.Rows, m.Cols)
	case fast:
		return kernel.MoERowsBF16f(q, kernel.MoERowsBF16fKernel(name), grid, moeRowsThreads, devPtr(y), devPtr(W).Add(m.WOff),
			devPtr(x), devPtr(m.Offsets), devPtr(m.RowIds), mstride, m.XStride, m.Rows, m.Cols)
	}
	return kernel.MoERowsBF16(q, kernel.MoERowsBF16Kernel(name), grid, moeRowsThreads, devPtr(y), devPtr(W).Add(m.WOff),
		devPtr(x), devPtr(m.Offsets), devPtr(m.RowIds), mstride, m.XStride, m.Rows, m.Cols)
}

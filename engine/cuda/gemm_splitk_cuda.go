//go:build cuda

package cuda

import (
	"gorgonia.org/cu"
)

// gemmSplitZero zeroes the output of a split-K launch (dense33,
// kernels/gemm.cu GEMM_MMA_SPLITK) before it: its blocks add their partial
// sums into Y, so Y's [N, Rows] region (row stride YStride floats) must hold
// zeros, and only that region: a strided Y may share its rows with other
// projections' columns (mixers_cuda.go projection), hence the 2D memset
// there. Any other instance (suffix) is left alone. One memset node in the
// stream (a graph capture records it): ≈ 2.4 MB at 300 rows of out
// 4096 → 2048, a few µs against the ≈ 60 µs the split saves.
func (q *Queue) gemmSplitZero(g Gemm, suffix string, y Tensor) error {
	if gemmMmaInstances[suffix].splits == 0 {
		return nil
	}
	ys := g.ystride()
	if ys == g.Rows {
		return cu.MemsetD32Async(cu.DevicePtr(y.addr()), 0, int64(g.N)*int64(g.Rows), q.Stream())
	}
	return cu.MemsetD2D32Async(cu.DevicePtr(y.addr()), int64(ys)*4, 0, int64(g.Rows), int64(g.N), q.Stream())
}

package cuda

import "fmt"

// GemvVariant is one compiled instance of a GEMV kernel (kernels/ops.cu).
// The FMA kernels (MMA false): groups of TPR threads share a row, each group
// computes Rows rows, Unroll 16-byte loads per thread and row are in flight
// at once. The FP8 tensor-core kernels (MMA true, Rows 8): TPR threads share
// an 8-row tile, each warp with Unroll 64-column chunk groups in flight.
// Every instance loads its first weights before the programmatic-dependent-
// launch wait.
type GemvVariant struct {
	TPR, Rows, Unroll int
	MMA               bool
}

// Name is the kernel name suffix, e.g. "t128r2u2" or "m256u4".
func (v GemvVariant) Name() string {
	if v.MMA {
		return fmt.Sprintf("m%du%d", v.TPR, v.Unroll)
	}
	return fmt.Sprintf("t%dr%du%d", v.TPR, v.Rows, v.Unroll)
}

const (
	gemvThreads = 256  // GEMV_THREADS in ops.cu
	gemvMMAMaxC = 4096 // GEMV_MMA_MAXC in ops.cu: the widest row the MMA kernels take
)

func fma(tpr, rows, unroll int) GemvVariant { return GemvVariant{tpr, rows, unroll, false} }
func mma(tpr, unroll int) GemvVariant       { return GemvVariant{tpr, 8, unroll, true} }

// GemvBF16Variants and GemvFP8Variants are the instances in kernels/ops.cu.
var (
	GemvBF16Variants = []GemvVariant{fma(32, 1, 8), fma(32, 2, 4), fma(64, 2, 4), fma(128, 2, 2), fma(128, 4, 2),
		fma(256, 2, 2), fma(256, 4, 1), fma(32, 4, 2), fma(32, 8, 2), fma(128, 2, 4)}
	GemvFP8Variants = []GemvVariant{fma(32, 2, 2), fma(32, 4, 2), fma(64, 4, 2), fma(128, 2, 2), fma(128, 4, 1),
		fma(256, 4, 1), fma(32, 4, 1), fma(32, 8, 1), fma(32, 4, 4), fma(128, 4, 2),
		mma(256, 4), mma(256, 2), mma(256, 1), mma(128, 2), mma(128, 1), mma(64, 1), mma(32, 1)}
)

// Grid returns the blocks per matrix and the rows per block of a [rows, ·]
// projection: a block of 256 threads computes 256/TPR·Rows rows.
func (v GemvVariant) Grid(rows int) (blocks, rb int) {
	rb = gemvThreads / v.TPR * v.Rows
	return (rows + rb - 1) / rb, rb
}

// Fits says whether the instance can compute a projection of cols columns.
func (v GemvVariant) Fits(cols int) bool { return !v.MMA || cols <= gemvMMAMaxC }

// ChooseGemv picks the GEMV instance for a [rows, cols] projection applied
// to n matrices at once, from the bandwidth test on the H200 (docs/PERF.md,
// "CUDA kernels").
func ChooseGemv(fp8 bool, rows, cols, n int) GemvVariant {
	switch {
	case fp8 && cols <= 512:
		return mma(64, 1)
	case fp8 && cols <= gemvMMAMaxC:
		return mma(256, 4)
	case fp8:
		return fma(32, 4, 4)
	case cols <= 512:
		return fma(32, 4, 2)
	}
	return fma(128, 2, 2)
}

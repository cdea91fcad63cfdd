package cuda

import "fmt"

// GemvVariant is one compiled instance of a GEMV kernel (kernels/ops.cu).
//
// Register kernels (Stages 0): groups of TPR threads share a row, each group
// computes Rows rows, Unroll 16-byte loads per thread and row are in flight
// at once; with L2 each thread first asks L2 to prefetch all its weights,
// before the programmatic-dependent-launch wait.
//
// Streaming kernels (Stages > 0): about two blocks of 256 threads per
// multiprocessor, each streaming its rows' contiguous bytes through a
// shared-memory ring of Stages stages of Unroll 16-byte chunks per thread
// (cp.async), the first Stages requested before the wait.
type GemvVariant struct {
	TPR, Rows, Unroll int
	L2                bool
	Stages            int
}

// Name is the kernel name suffix, e.g. "t128r2u2", "t128r2u2l2" or "s2x5".
func (v GemvVariant) Name() string {
	if v.Stages > 0 {
		return fmt.Sprintf("s%dx%d", v.Unroll, v.Stages)
	}
	n := fmt.Sprintf("t%dr%du%d", v.TPR, v.Rows, v.Unroll)
	if v.L2 {
		n += "l2"
	}
	return n
}

const (
	gemvThreads   = 256  // GEMV_THREADS in ops.cu
	gemvStreamMax = 1024 // GEMV_S_MAXRB in ops.cu: rows per block of a streaming kernel
)

func regs(tpr, rows, unroll int) GemvVariant {
	return GemvVariant{TPR: tpr, Rows: rows, Unroll: unroll}
}
func regsL2(tpr, rows, unroll int) GemvVariant {
	return GemvVariant{TPR: tpr, Rows: rows, Unroll: unroll, L2: true}
}
func stream(q, stages int) GemvVariant {
	return GemvVariant{TPR: gemvThreads, Rows: 1, Unroll: q, Stages: stages}
}

// GemvBF16Variants and GemvFP8Variants are the instances in kernels/ops.cu.
var (
	GemvBF16Variants = []GemvVariant{regs(32, 1, 8), regs(32, 2, 4), regs(64, 2, 4), regs(128, 2, 2), regs(128, 4, 2),
		regs(256, 2, 2), regs(256, 4, 1), regs(32, 4, 2), regs(32, 8, 2), regs(128, 2, 4),
		regsL2(128, 2, 2), regsL2(32, 8, 2), regsL2(32, 4, 2), regsL2(256, 4, 1),
		stream(2, 5), stream(4, 2), stream(1, 8)}
	GemvFP8Variants = []GemvVariant{regs(32, 2, 2), regs(32, 4, 2), regs(64, 4, 2), regs(128, 2, 2), regs(128, 4, 1),
		regs(256, 4, 1), regs(32, 4, 1), regs(32, 8, 1), regs(32, 4, 4), regs(128, 4, 2),
		regsL2(32, 4, 2), regsL2(64, 4, 2), regsL2(32, 8, 1), regsL2(128, 4, 2),
		stream(2, 5), stream(4, 2), stream(1, 8)}
)

// Grid returns the blocks per matrix and the rows per block of a [rows, ·]
// projection applied to n matrices on a device of sms multiprocessors.
func (v GemvVariant) Grid(rows, n, sms int) (blocks, rb int) {
	if v.Stages == 0 {
		rb = gemvThreads / v.TPR * v.Rows
		return (rows + rb - 1) / rb, rb
	}
	per := max(1, (2*sms+n-1)/n)
	rb = min((rows+per-1)/per, gemvStreamMax)
	return (rows + rb - 1) / rb, rb
}

// Fits says whether the instance can compute rows of cols elements of
// elemBytes each: a streaming kernel needs whole warps of 16-byte chunks per row.
func (v GemvVariant) Fits(cols, elemBytes int) bool {
	return v.Stages == 0 || (cols*elemBytes)%(32*16) == 0
}

// ChooseGemv picks the GEMV instance for a [rows, cols] projection applied
// to n matrices at once, from the bandwidth test on the H200 (docs/PERF.md,
// "CUDA kernels").
func ChooseGemv(fp8 bool, rows, cols, n int) GemvVariant {
	switch {
	case fp8 && cols <= 512:
		return regs(32, 8, 1)
	case fp8 && cols >= 4096:
		return regs(256, 4, 1)
	case fp8 && n > 1:
		return regs(64, 4, 2)
	case fp8:
		return regs(32, 4, 4)
	case cols <= 512:
		return regs(32, 4, 2)
	}
	return regs(128, 2, 2)
}

package cuda

import "fmt"

// GemvVariant is one compiled instance of a GEMV kernel (kernels/gemv.cu):
// groups of TPR threads share a row, each group computes Rows rows, Unroll
// 16-byte loads per thread and row are in flight at once.
type GemvVariant struct {
	TPR, Rows, Unroll int
}

// Name is the kernel name suffix, e.g. "t128r2u2".
func (v GemvVariant) Name() string { return fmt.Sprintf("t%dr%du%d", v.TPR, v.Rows, v.Unroll) }

const gemvThreads = 256 // GEMV_THREADS in kernels/gemv.cu

// GemvBF16Variants and GemvFP8Variants are the instances in kernels/gemv.cu.
var (
	GemvBF16Variants = []GemvVariant{{32, 1, 8}, {32, 2, 4}, {64, 2, 4}, {128, 2, 2}, {128, 4, 2}, {256, 2, 2}, {256, 4, 1},
		{32, 4, 2}, {32, 8, 2}, {128, 2, 4}}
	GemvFP8Variants = []GemvVariant{{32, 2, 2}, {32, 4, 2}, {64, 4, 2}, {128, 2, 2}, {128, 4, 1}, {256, 4, 1},
		{32, 4, 1}, {32, 8, 1}, {32, 4, 4}, {128, 4, 2}}
)

// Grid returns the blocks per matrix and the rows per block of a [rows, ·]
// projection: a block of 256 threads computes 256/TPR·Rows rows.
func (v GemvVariant) Grid(rows int) (blocks, rb int) {
	rb = gemvThreads / v.TPR * v.Rows
	return (rows + rb - 1) / rb, rb
}

// ChooseGemv picks the GEMV instance for a [rows, cols] projection applied
// to n matrices at once, from the bandwidth test on the H200 (docs/PERF.md,
// "CUDA kernels"). What matters most is that a thread's loads of a row are
// all useful and in flight at once: narrow rows (512 columns) want one warp per
// row group and several rows per warp, wider rows a row spread over more
// threads; FP8 launches of 8192 rows or more (one matrix, or the 16 gate and
// up matrices of 8 experts) a warp per 4 rows.
func ChooseGemv(fp8 bool, rows, cols, n int) GemvVariant {
	switch {
	case fp8 && cols <= 512:
		return GemvVariant{32, 8, 1}
	case fp8 && cols >= 4096:
		return GemvVariant{256, 4, 1}
	case fp8 && n*rows < 8192:
		return GemvVariant{64, 4, 2}
	case fp8:
		return GemvVariant{32, 4, 4}
	case cols <= 512:
		return GemvVariant{32, 4, 2}
	}
	return GemvVariant{128, 2, 2}
}

// FP8Block is the side of the square blocks FP8 weights share one scale in.
const FP8Block = 128

// FP8ScaleCount is the number of float32 scales of one [rows, cols] block-FP8 matrix.
func FP8ScaleCount(rows, cols int) int {
	return ((rows + FP8Block - 1) / FP8Block) * ((cols + FP8Block - 1) / FP8Block)
}

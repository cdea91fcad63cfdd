package cuda

import "proscenium/engine/cuda/kernel"

// The tensor-core GEMM of fast numerics (kernels/gemm.cu gemm_x3_body: BF16
// MMAs, each activation as three BF16 parts, float32 accumulation): its
// instances and which one a shape takes. Exact numerics never run them (the
// FP64 instances keep the CPU's bits).

// gemmX3 is one instance: W rows (BM) by X rows (BN) per block.
type gemmX3 struct{ bm, bn int }

// gemmX3Instances are the compiled instances by Gemm.Kernel name.
var gemmX3Instances = map[string]gemmX3{
	"x3m64n64": {64, 64}, "x3m16n64": {16, 64}, "x3m64n8": {64, 8}, "x3m64n16": {64, 16}, "x3m64n32": {64, 32},
}

// gemmX3Threads is the tensor-core GEMM's block (4 warps).
const gemmX3Threads = kernel.GemmX3Threads

// ChooseGemmFast picks the tensor-core instance of a GEMM of n rows of X
// and rows rows of W. Grouped (groups > 0: the experts of a prefill, n pairs
// over groups experts), a block runs its whole group over one 64-row W tile,
// BN X rows a pass: the narrowest tile holding the mean pairs per expert, so
// that a few rows an expert do not pay for 64. Dense, 64 × 64 tiles, or 16 W
// rows by 64 X rows when the 64-row tiles would give the 132 SMs of an H200
// fewer than two blocks each (a short prompt's 2048-row outputs).
func ChooseGemmFast(n, rows, groups int) string {
	if groups > 0 {
		switch mean := (n + groups - 1) / groups; {
		case mean <= 8:
			return "x3m64n8"
		case mean <= 16:
			return "x3m64n16"
		}
		return "x3m64n32"
	}
	if ((n+63)/64)*((rows+63)/64) < 2*132 {
		return "x3m16n64"
	}
	return "x3m64n64"
}

// x3Grid is the grid of g on instance x: dense (X tiles, W tiles, 1);
// grouped (1, W tiles, groups), each block running its group's rows.
func (g Gemm) x3Grid(x gemmX3) [3]int {
	if g.Groups > 0 {
		return [3]int{1, (g.Rows + x.bm - 1) / x.bm, g.Groups}
	}
	return [3]int{(g.N + x.bn - 1) / x.bn, (g.Rows + x.bm - 1) / x.bm, 1}
}

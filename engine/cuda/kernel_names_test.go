package cuda

import (
	"slices"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// TestGemvVariantsAreKernels checks every GEMV variant the Go side may choose
// names a compiled instance of kernels/gemv.cu (the generated bindings list
// them), for each of the four instance families gemvLaunch picks from.
// Taking an instance out of gemv.cu without its variant fails here.
func TestGemvVariantsAreKernels(t *testing.T) {
	for _, v := range GemvBF16Variants {
		if !slices.Contains(kernel.GemvBF16Kernels, kernel.GemvBF16Kernel("gemv_bf16_"+v.Name())) ||
			!slices.Contains(kernel.GemvBF16dKernels, kernel.GemvBF16dKernel("gemv_bf16d_"+v.Name())) {
			t.Errorf("BF16 variant %s has no gemv_bf16[d]_%[1]s in kernels/gemv.cu", v.Name())
		}
	}
	for _, v := range GemvFP8Variants {
		if !slices.Contains(kernel.GemvFP8Kernels, kernel.GemvFP8Kernel("gemv_fp8_"+v.Name())) ||
			!slices.Contains(kernel.GemvFP8dKernels, kernel.GemvFP8dKernel("gemv_fp8d_"+v.Name())) {
			t.Errorf("FP8 variant %s has no gemv_fp8[d]_%[1]s in kernels/gemv.cu", v.Name())
		}
	}
	if len(GemvBF16Variants) != len(kernel.GemvBF16Kernels) || len(GemvFP8Variants) != len(kernel.GemvFP8Kernels) {
		t.Errorf("%d BF16 and %d FP8 variants for %d and %d instances: a compiled instance the Go side cannot choose",
			len(GemvBF16Variants), len(GemvFP8Variants), len(kernel.GemvBF16Kernels), len(kernel.GemvFP8Kernels))
	}
}

package cuda

import (
	"strings"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// TestMoEGateUpIdsTwins checks every routed gate·up instance of
// kernels/moe.cu (moe_gate_up_*) has its twin without the routing
// (moe_gate_up_ids_*), so $PROSCENIUM_GPU_SPLIT_ROUTE=rows never falls back
// to the gathered GEMV's copies of x for a variant the choosers give.
func TestMoEGateUpIdsTwins(t *testing.T) {
	twin := func(family string, routed, ids []string) {
		for _, r := range routed {
			want := strings.Replace(r, "moe_gate_up_", "moe_gate_up_ids_", 1)
			found := false
			for _, i := range ids {
				found = found || i == want
			}
			if !found {
				t.Errorf("%s: %s has no %s", family, r, want)
			}
		}
		if len(routed) != len(ids) {
			t.Errorf("%s: %d routed instances, %d without the routing", family, len(routed), len(ids))
		}
	}
	twin("fp8", kernelNames(kernel.MoEGateUpFP8Kernels), kernelNames(kernel.MoEGateUpIdsFP8Kernels))
	twin("fp8d", kernelNames(kernel.MoEGateUpFP8dKernels), kernelNames(kernel.MoEGateUpIdsFP8dKernels))
	twin("bf16", kernelNames(kernel.MoEGateUpBF16Kernels), kernelNames(kernel.MoEGateUpIdsBF16Kernels))
	twin("bf16d", kernelNames(kernel.MoEGateUpBF16dKernels), kernelNames(kernel.MoEGateUpIdsBF16dKernels))
}

// kernelNames is a generated instance list as strings.
func kernelNames[K ~string](list []K) []string {
	out := make([]string, len(list))
	for i, k := range list {
		out[i] = string(k)
	}
	return out
}

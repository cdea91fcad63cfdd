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
	names := func(list any) []string {
		var out []string
		switch l := list.(type) {
		case []kernel.MoEGateUpFP8Kernel:
			for _, k := range l {
				out = append(out, string(k))
			}
		case []kernel.MoEGateUpIdsFP8Kernel:
			for _, k := range l {
				out = append(out, string(k))
			}
		case []kernel.MoEGateUpFP8dKernel:
			for _, k := range l {
				out = append(out, string(k))
			}
		case []kernel.MoEGateUpIdsFP8dKernel:
			for _, k := range l {
				out = append(out, string(k))
			}
		case []kernel.MoEGateUpBF16Kernel:
			for _, k := range l {
				out = append(out, string(k))
			}
		case []kernel.MoEGateUpIdsBF16Kernel:
			for _, k := range l {
				out = append(out, string(k))
			}
		case []kernel.MoEGateUpBF16dKernel:
			for _, k := range l {
				out = append(out, string(k))
			}
		case []kernel.MoEGateUpIdsBF16dKernel:
			for _, k := range l {
				out = append(out, string(k))
			}
		}
		return out
	}
	twin("fp8", names(kernel.MoEGateUpFP8Kernels), names(kernel.MoEGateUpIdsFP8Kernels))
	twin("fp8d", names(kernel.MoEGateUpFP8dKernels), names(kernel.MoEGateUpIdsFP8dKernels))
	twin("bf16", names(kernel.MoEGateUpBF16Kernels), names(kernel.MoEGateUpIdsBF16Kernels))
	twin("bf16d", names(kernel.MoEGateUpBF16dKernels), names(kernel.MoEGateUpIdsBF16dKernels))
}

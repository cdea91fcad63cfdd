package cuda

import "proscenium/engine/drama3"

// The numerics policy (docs/MODEL.md "Numerics policy") picks kernel
// instances here and nowhere else. A kernel family whose body takes the
// policy as a template parameter (kernels/numerics.cuh NUMERICS_KERNEL) has
// two extern "C" instances: the family's name (Exact, the contract) and
// name_fast (Fast). The GEMVs name theirs by format (gemv_bf16d_… Exact,
// gemv_bf16_… Fast, backboneGemv).

// policyKernels are the families with an instance per policy.
var policyKernels = []string{"add_rmsnorm_zc", "rmsnorm_zc_f32", "moe_swiglu", "moe_combine_norm", "moe_down",
	"attn_prep", "attn_scores", "attn_partial", "attn_combine", "deltanet_step_cols", "deltanet_step_norm"}

// policyKernel is the instance of family base for numerics n.
func policyKernel(n drama3.Numerics, base string) string {
	if n.Exact() {
		return base
	}
	return base + "_fast"
}

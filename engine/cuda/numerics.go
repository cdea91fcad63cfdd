package cuda

import (
	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// The numerics policy (docs/MODEL.md "Numerics policy") picks kernel
// instances here and nowhere else. A kernel family whose body takes the
// policy as a template parameter (kernels/numerics.cuh NUMERICS_KERNEL) has
// two extern "C" instances, name (Exact, the contract) and name_fast (Fast);
// its generated launch function takes the kernel.Policy (engine/cuda/kernel,
// so a family templated without the Go side knowing fails to compile). The
// GEMVs name theirs by format (gemv_bf16d_… Exact, gemv_bf16_… Fast,
// backboneGemv).

// policyOf is the kernel instance of numerics n (the zero value is fast).
func policyOf(n drama3.Numerics) kernel.Policy {
	if n.Exact() {
		return kernel.Exact
	}
	return kernel.Fast
}

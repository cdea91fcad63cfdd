package cuda

import "os"

// The fused decode step (issue 27, "fewer, fatter launches"; docs/MODEL.md
// "Fused step"): under fast numerics a one-row step can run three kernels
// that end with a grid-wide tail (kernels/fused.cuh: the last block to finish
// runs the next launch's work) in place of six launches a layer:
//
//   - the mixer's output projection with the residual add and post norm
//     (gemv_bf16_add_norm_fast for gemv + add_rmsnorm_zc_fast);
//   - the MoE's dense projection with the routing (gemv_bf16_route_fast for
//     gemv + moe_route);
//   - the down projections with the combine, residual and next norm
//     (moe_down_combine_fast for moe_down_fast + moe_combine_norm_fast).
//
// 120 launches fewer a step at the full geometry (40 layers: 423 → 303).
// The exact step keeps its launches and bits.

// FusedCounters is the uint32 tail counters of a fused step, one per fused
// kernel (the plan's Counters).
const FusedCounters = 3

// The counter of each fused kernel.
const (
	counterAddNorm = iota
	counterRoute
	counterCombine
)

// FusedEnv is the environment variable that makes new backbones run the
// fused step under fast numerics ("1"); any other value or none keeps the
// unfused step (the default until the fused one is measured faster).
const FusedEnv = "PROSCENIUM_GPU_FUSED"

// fusedFromEnv is FusedEnv's choice.
func fusedFromEnv() bool { return os.Getenv(FusedEnv) == "1" }

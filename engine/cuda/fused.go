package cuda

import "os"

// The fused decode step (issue 27, "fewer, fatter launches"; docs/MODEL.md
// "Fused step"): under fast numerics a one-row step can run kernels that end
// with a grid-wide tail (kernels/fused.cuh: the last block to finish runs the
// next launch's work) in place of two launches each:
//
//   - the DeltaNet step (deltanet_step_fused_fast for deltanet_step_cols_fast
//     + deltanet_step_norm_fast: a tail per value head);
//   - attention's sums (attn_partial_combine_fast for attn_partial_fast +
//     attn_combine_fast: a tail per head);
//   - the mixer's output projection with the residual add and post norm
//     (gemv_bf16_add_norm_fast for the GEMV + add_rmsnorm_zc_fast);
//   - the MoE's dense projection with the routing (gemv_bf16_route_fast for
//     the GEMV + moe_route);
//   - the down projections with the combine, residual and next norm
//     (moe_down_combine_fast for moe_down_fast + moe_combine_norm_fast).
//
// At the full geometry (30 DeltaNet and 10 attention layers) a step has
// 160 launches fewer: 423 → 263. The exact step keeps its launches and bits.

// The fused step's uint32 tail counters (the plan's Counters): one for each
// fused kernel of the layer glue, then one per head of the mixer's (DeltaNet
// value heads or attention heads: the layers run one after another).
const (
	counterAddNorm = iota
	counterRoute
	counterCombine
	counterHeads // + head
)

// headCounters is the per-head counters a fused mixer kernel may use, and
// the decode attention's of a B-row step (attention_decode.go).
func (p *BackbonePlan) headCounters() int {
	return max(p.DeltaNet.ValueHeads, p.Attention.Heads, p.Attention.decodeCounters(MaxStepRows))
}

// CounterWords is the tail counters the plan reserves.
func (p *BackbonePlan) CounterWords() int { return counterHeads + p.headCounters() }

// FusedEnv is the environment variable that makes new backbones run the
// fused step under fast numerics ("1"), or only its two mixer kernels with
// a tail per head ("mixers": deltanet_step_fused_fast and
// attn_partial_combine_fast, whose tails are a head's own short work run by
// one of its blocks, not a row's serial tail); any other value or none
// keeps the unfused step (the default until the fused one is measured
// faster).
const FusedEnv = "PROSCENIUM_GPU_FUSED"

// fusedFromEnv is FusedEnv's choice: the whole fused step, or its mixers.
func fusedFromEnv() (all, mixers bool) {
	v := os.Getenv(FusedEnv)
	return v == "1", v == "1" || v == "mixers"
}

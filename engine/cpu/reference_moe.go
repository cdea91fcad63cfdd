package cpu

import "proscenium/engine/drama3"

// Exported thin wrappers over the mixture of experts (moe.go), the
// references of the GPU backend's MoE kernels (engine/cuda tests).

// Route returns the top-k experts of one row's router logits and their
// renormalised weights (softmax over all experts, ties to the lower index).
func Route(logits []float32, k int) ([]int, []float32) { return route(logits, k) }

// MoEForward computes the feed-forward out [n, Hidden] of n rows x (already
// post-attention normed), routed experts and the gated shared expert.
func MoEForward(out, x []float32, n int, w *drama3.MoE[[]float32], g *drama3.TextConfig) {
	moeForward(out, x, n, w, g, nil)
}

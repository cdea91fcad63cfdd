package cpu

import (
	"math"
	"sort"

	"proscenium/engine/drama3"
)

// This file is the backbone's mixture of experts (MODEL.md §2): router
// softmax over all experts in fp32 → top-k → renormalise the k weights; each
// chosen expert down(silu(gate x)·up x); plus the shared expert scaled by
// sigmoid(shared_expert_gate x).

// route returns the top-k experts of one row and their renormalised weights:
// softmax of the router logits over all experts, the k largest probabilities
// (ties to the lower index), divided by their sum. The sum of the k is a
// float64 sum rounded once, and each weight one float32 division (the
// numerics contract's rule 2), so any order of the k gives the same bits.
func route(logits []float32, k int) ([]int, []float32) {
	probs := softmax(logits)
	return routeWeights(probs, rankExperts(probs)[:k])
}

// rankExperts is every expert by probability, largest first, ties to the
// lower index: route's order, whose first k it chooses.
func rankExperts(probs []float32) []int {
	idx := make([]int, len(probs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return probs[idx[a]] > probs[idx[b]] })
	return idx
}

// routeWeights is the chosen experts idx with their renormalised weights.
func routeWeights(probs []float32, idx []int) ([]int, []float32) {
	k := len(idx)
	wts := make([]float32, k)
	var sum float64
	for i, e := range idx {
		wts[i] = probs[e]
		sum += float64(probs[e])
	}
	for i := range wts {
		wts[i] /= float32(sum)
	}
	return idx, wts
}

// softmax is the float32 softmax with the maximum m subtracted: e_i =
// float32(exp(x_i − m)), their float64 sum rounded once to S, and p_i = e_i/S
// one float32 division (the numerics contract's rules 2 and 3).
func softmax(x []float32) []float32 {
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	out := make([]float32, len(x))
	var sum float64
	for i, v := range x {
		out[i] = float32(math.Exp(float64(v - m)))
		sum += float64(out[i])
	}
	s := float32(sum)
	for i := range out {
		out[i] /= s
	}
	return out
}

// swiGLUFFN computes dst [Hidden] = down(silu(gate x)·up x) for one row,
// using scratch [2·ffn].
func swiGLUFFN(dst, x []float32, w *drama3.Expert[[]float32], hid, ffn int, scratch []float32) {
	g, u := scratch[:ffn], scratch[ffn:2*ffn]
	for r := 0; r < ffn; r++ {
		g[r] = Dot(w.Gate[r*hid:(r+1)*hid], x)
		u[r] = Dot(w.Up[r*hid:(r+1)*hid], x)
	}
	SwiGLU(g, g, u)
	for r := 0; r < hid; r++ {
		dst[r] = Dot(w.Down[r*ffn:(r+1)*ffn], g)
	}
}

// moeForward computes out [n, Hidden] for n rows x (already post-attention
// normed). Each (row, chosen expert) pair and each row's shared expert is one
// work item on its own buffer; the sums are formed afterwards in a fixed
// order, so the result does not depend on the number of goroutines.
//
// tap, when not nil, sees each row's routing (its top-k margin, route_tap.go)
// and may force a swap at the k-th place: a replay's tool. nil costs nothing
// and the routing is route's.
func moeForward(out, x []float32, n int, w *drama3.MoE[[]float32], g *drama3.TextConfig, tap *routeRows) {
	hid, k := g.HiddenSize, g.NumExpertsPerTok
	logits := make([]float32, n*g.NumExperts)
	MatMulRows(logits, w.Router, x, n, g.NumExperts, hid)
	experts := make([]int, n*k)
	weights := make([]float32, n*k)
	for t := 0; t < n; t++ {
		idx, wts := route(logits[t*g.NumExperts:(t+1)*g.NumExperts], k)
		if tap != nil {
			idx, wts = tap.row(t, logits[t*g.NumExperts:(t+1)*g.NumExperts], x[t*hid:(t+1)*hid], w.Router, idx, wts)
		}
		copy(experts[t*k:], idx)
		copy(weights[t*k:], wts)
	}

	// Items 0…n·k−1 are routed experts, n·k…n·k+n−1 the shared expert per row.
	items := n*k + n
	shared := drama3.Expert[[]float32]{Gate: w.SharedGate, Up: w.SharedUp, Down: w.SharedDown}
	partial := make([]float32, items*hid)
	ffnMax := max(g.MoEIntermediate, g.SharedIntermediate)
	parallelFor(items, items*hid*ffnMax*3, func(lo, hi int) {
		scratch := make([]float32, 2*ffnMax)
		for it := lo; it < hi; it++ {
			dst := partial[it*hid : (it+1)*hid]
			if it < n*k {
				t := it / k
				ex := drama3.ExpertSlices(w, experts[it], g)
				swiGLUFFN(dst, x[t*hid:(t+1)*hid], &ex, hid, g.MoEIntermediate, scratch)
				continue
			}
			t := it - n*k
			xt := x[t*hid : (t+1)*hid]
			swiGLUFFN(dst, xt, &shared, hid, g.SharedIntermediate, scratch)
			gate := Sigmoid(Dot(w.SharedExpertGate, xt))
			for i := range dst {
				dst[i] *= gate
			}
		}
	})
	// The combine, in this order of float32 operations per element (the
	// numerics contract's rule 4): o = 0; o += float32(w_j·y_j) for
	// j = 0…k−1 in the order route chose them; o += shared (already
	// float32(y_shared·sigmoid(gate))).
	for t := 0; t < n; t++ {
		o := out[t*hid : (t+1)*hid]
		clear(o)
		for j := 0; j < k; j++ {
			AddScaled(o, partial[(t*k+j)*hid:(t*k+j+1)*hid], weights[t*k+j])
		}
		Add(o, partial[(n*k+t)*hid:(n*k+t+1)*hid])
	}
}

package cpu

import "proscenium/engine/drama3"

// Exported entry points to the backbone's mixers for the CUDA kernels' device
// tests (engine/cuda), which compare each kernel with the code here. Thin on
// purpose: the definitions stay in deltanet.go and attention.go.

// DeltaNetRef is a DeltaNet layer's state between calls of DeltaNetForwardRef:
// Conv [ConvKernel−1, channels] (the last conv inputs, oldest first) and S
// [LinValueHeads, LinKeyDim, LinValueDim]. The zero value is the start.
type DeltaNetRef struct {
	st *deltaNetState
}

// S is the recurrent state [LinValueHeads, LinKeyDim, LinValueDim].
func (r *DeltaNetRef) S() []float32 { return r.st.s }

// DeltaNetForwardRef is the DeltaNet mixer (deltaNetForward) on n rows x
// [n, Hidden], writing out [n, Hidden] and advancing r: one row runs the
// recurrence, more the chunked form, as in the backbone.
func DeltaNetForwardRef(out, x []float32, n int, w *drama3.DeltaNet[[]float32], g *drama3.TextConfig, r *DeltaNetRef) {
	if r.st == nil {
		r.st = newDeltaNetState(g)
	}
	deltaNetForward(out, x, n, w, g, r.st)
}

// Conv is the conv state [ConvKernel−1, channels], oldest row first.
func (r *DeltaNetRef) Conv() []float32 { return r.st.conv }

// DeltaNetMixRef is the DeltaNet mixer between its input projections and
// out_proj (deltaNetMix) on n projected rows: qkv [n, channels], z
// [n, LinValueHeads·LinValueDim], b and a [n, LinValueHeads] (not modified),
// writing the gated-norm output core [n, LinValueHeads·LinValueDim] and
// advancing r (as DeltaNetForwardRef: one row the recurrence, more the
// chunked form).
func DeltaNetMixRef(core, qkv, z, b, a []float32, n int, w *drama3.DeltaNet[[]float32], g *drama3.TextConfig, r *DeltaNetRef) {
	if r.st == nil {
		r.st = newDeltaNetState(g)
	}
	deltaNetMix(core, qkv, z, append([]float32(nil), b...), append([]float32(nil), a...), n, w, g, r.st)
}

// DeltaNetRecurrentRef runs the delta rule one row at a time on inputs laid
// out as deltaNetForward's after the conv (conv [n, channels] normed q, k, v;
// beta and decay [n, LinValueHeads]), writing core [n, LinValueHeads·LinValueDim]
// and updating state; DeltaNetChunkedRef is the chunked form of the same.
func DeltaNetRecurrentRef(core, conv, beta, decay []float32, n int, g *drama3.TextConfig, state []float32) {
	gatedDeltaRuleRecurrent(core, conv, beta, decay, n, g, state)
}

// DeltaNetChunkedRef: see DeltaNetRecurrentRef.
func DeltaNetChunkedRef(core, conv, beta, decay []float32, n int, g *drama3.TextConfig, state []float32) {
	gatedDeltaRuleChunked(core, conv, beta, decay, n, g, state)
}

// AttentionRef is an attention layer's KV cache between calls of
// AttentionForwardRef ([rows, KVHeads, HeadDim] keys, normed and rotated, and
// values). The zero value is empty.
type AttentionRef struct {
	kv   kvCache
	rows int
}

// Rows is the number of cached rows.
func (r *AttentionRef) Rows() int { return r.rows }

// Keys and Values are the cache's contents.
func (r *AttentionRef) Keys() []float32   { return r.kv.k }
func (r *AttentionRef) Values() []float32 { return r.kv.v }

// AttentionForwardRef is the gated attention mixer (attentionForward) on n rows
// x [n, Hidden] at the positions after the cached rows, writing out
// [n, Hidden] and appending to the cache.
func AttentionForwardRef(out, x []float32, n int, w *drama3.Attention[[]float32], g *drama3.TextConfig, r *AttentionRef) {
	attentionForward(out, x, n, r.rows, w, g, newRopeTable(g.RotaryDim(), g.RopeTheta), &r.kv)
	r.rows += n
}

// AttentionCoreRef is the attention mixer between its projections
// (attentionCore) on n projected rows proj [n, (2·NumHeads + 2·NumKVHeads)·HeadDim]
// laid out per row as the CUDA kernels read them: per query head the query
// then the gate, then the keys, then the values. It writes attn
// [n, NumHeads·HeadDim] (o_proj's input) and appends to the cache.
func AttentionCoreRef(attn, proj []float32, n int, qnorm, knorm []float32, g *drama3.TextConfig, r *AttentionRef) {
	qw, kw := g.NumHeads*2*g.HeadDim, g.NumKVHeads*g.HeadDim
	pw := qw + 2*kw
	qg, k, v := make([]float32, n*qw), make([]float32, n*kw), make([]float32, n*kw)
	for t := 0; t < n; t++ {
		row := proj[t*pw : (t+1)*pw]
		copy(qg[t*qw:], row[:qw])
		copy(k[t*kw:], row[qw:qw+kw])
		copy(v[t*kw:], row[qw+kw:])
	}
	attentionCore(attn, qg, k, v, n, r.rows, qnorm, knorm, g, newRopeTable(g.RotaryDim(), g.RopeTheta), &r.kv)
	r.rows += n
}

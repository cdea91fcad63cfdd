package cpu

import (
	"math"

	"proscenium/engine/drama3"
)

// This file is the backbone's gated full attention (MODEL.md §2): q_proj
// yields per head [query | gate]; zero-centred q/k norms over head_dim;
// rotate-half RoPE on the leading RotaryDim dims; grouped-query attention
// (query head h reads KV head h / (Heads/KVHeads)); causal softmax with scale
// head_dim^-0.5 over a KV cache; the output times sigmoid(gate); o_proj.

// kvCache holds the normed, rotated keys and the values of every row so far,
// [rows, KVHeads, HeadDim] each (a backbone full-attention layer's, a tower
// layer's).
type kvCache struct {
	k, v []float32
}

// attentionForward computes the mixer output out [n, Hidden] for n new rows x
// (already input-normed) at positions pos0…pos0+n−1 and appends their keys and
// values to the cache.
func attentionForward(out, x []float32, n, pos0 int, w *drama3.Attention[[]float32], g *drama3.TextConfig, rope *ropeTable, kv *kvCache) {
	hid, hd, nh, nkv := g.HiddenSize, g.HeadDim, g.NumHeads, g.NumKVHeads
	qg := make([]float32, n*nh*2*hd)
	k := make([]float32, n*nkv*hd)
	v := make([]float32, n*nkv*hd)
	MatMulRows(qg, w.QProj, x, n, nh*2*hd, hid)
	MatMulRows(k, w.KProj, x, n, nkv*hd, hid)
	MatMulRows(v, w.VProj, x, n, nkv*hd, hid)

	// Norms and RoPE, per row.
	parallelFor(n, n*(nh+nkv)*hd*4, func(lo, hi int) {
		half := rope.dim / 2
		cos, sin := make([]float32, half), make([]float32, half)
		for t := lo; t < hi; t++ {
			rope.cosSin(cos, sin, pos0+t)
			for h := 0; h < nh; h++ {
				q := qg[(t*nh+h)*2*hd:][:hd]
				RMSNormZeroCentred(q, q, w.QNorm, float32(g.RMSNormEps))
				rope.apply(q, cos, sin)
			}
			for h := 0; h < nkv; h++ {
				kh := k[(t*nkv+h)*hd:][:hd]
				RMSNormZeroCentred(kh, kh, w.KNorm, float32(g.RMSNormEps))
				rope.apply(kh, cos, sin)
			}
		}
	})
	kv.k = append(kv.k, k...)
	kv.v = append(kv.v, v...)

	attn := make([]float32, n*nh*hd)
	causalAttention(attn, qg, nh*2*hd, 2*hd, true, kv, n, pos0, nh, nkv, hd)
	MatMulRows(out, w.OProj, attn, n, hid, nh*hd)
}

// causalAttention writes attn [n, nh, hd]: for new row t (position pos0+t)
// and query head h, the softmax (scale hd^-0.5) of its query against the
// cached keys of rows 0…pos0+t of KV head h/(nh/nkv), applied to their values.
// Row t's query for head h is q[t·rowStride+h·headStride:][:hd]; when gated,
// the hd values after it are a gate and the output is multiplied by
// sigmoid(gate) (the backbone's gated attention). The backbone and the tower
// share it, so both follow one order of operations.
func causalAttention(attn, q []float32, rowStride, headStride int, gated bool, kv *kvCache, n, pos0, nh, nkv, hd int) {
	group := nh / nkv
	scale := float32(1 / math.Sqrt(float64(hd)))
	total := pos0 + n
	parallelFor(n*nh, n*nh*total*hd*2, func(lo, hi int) {
		scores := make([]float32, total)
		for item := lo; item < hi; item++ {
			t, h := item/nh, item%nh
			kvh := h / group
			qh := q[t*rowStride+h*headStride:][:hd]
			last := pos0 + t // causal: rows 0…last
			maxs := float32(math.Inf(-1))
			for p := 0; p <= last; p++ {
				s := Dot(qh, kv.k[(p*nkv+kvh)*hd:][:hd]) * scale
				scores[p] = s
				maxs = max(maxs, s)
			}
			var sum float32
			for p := 0; p <= last; p++ {
				e := float32(math.Exp(float64(scores[p] - maxs)))
				scores[p] = e
				sum += e
			}
			o := attn[(t*nh+h)*hd:][:hd]
			clear(o)
			for p := 0; p <= last; p++ {
				AddScaled(o, kv.v[(p*nkv+kvh)*hd:][:hd], scores[p]/sum)
			}
			if gated {
				gate := q[t*rowStride+h*headStride+hd:][:hd]
				for i := range o {
					o[i] *= Sigmoid(gate[i])
				}
			}
		}
	})
}

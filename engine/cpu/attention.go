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

	attn := make([]float32, n*nh*hd)
	attentionCore(attn, qg, k, v, n, pos0, w.QNorm, w.KNorm, g, rope, kv)
	MatMulRows(out, w.OProj, attn, n, hid, nh*hd)
}

// attentionCore is attentionForward between the projections: it norms and
// rotates the queries qg [n, nh, 2·hd] (per head the query, then the gate) in
// place and the keys k [n, nkv·hd], appends the keys and the values v to the
// cache, and writes the gated attention attn [n, nh·hd] (o_proj's input).
func attentionCore(attn, qg, k, v []float32, n, pos0 int, qnorm, knorm []float32, g *drama3.TextConfig, rope *ropeTable, kv *kvCache) {
	hd, nh, nkv := g.HeadDim, g.NumHeads, g.NumKVHeads
	eps := float32(g.RMSNormEps)
	parallelFor(n, n*(nh+nkv)*hd*4, func(lo, hi int) {
		half := rope.dim / 2
		cos, sin := make([]float32, half), make([]float32, half)
		for t := lo; t < hi; t++ {
			rope.cosSin(cos, sin, pos0+t)
			for h := 0; h < nh; h++ {
				q := qg[(t*nh+h)*2*hd:][:hd]
				RMSNormZeroCentred(q, q, qnorm, eps)
				rope.apply(q, cos, sin)
			}
			for h := 0; h < nkv; h++ {
				kh := k[(t*nkv+h)*hd:][:hd]
				RMSNormZeroCentred(kh, kh, knorm, eps)
				rope.apply(kh, cos, sin)
			}
		}
	})
	kv.k = append(kv.k, k...)
	kv.v = append(kv.v, v...)
	causalAttention(attn, qg, nh*2*hd, 2*hd, true, kv, n, pos0, nh, nkv, hd)
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
		acc := make([]float64, hd)
		for item := lo; item < hi; item++ {
			t, h := item/nh, item%nh
			kvh := h / group
			qh := q[t*rowStride+h*headStride:][:hd]
			last := pos0 + t // causal: rows 0…last
			// Scores s_p = Dot(q, k_p)·scale (rule 1, then one float32
			// product) and their maximum m over all rows.
			m := float32(math.Inf(-1))
			for p := 0; p <= last; p++ {
				s := Dot(qh, kv.k[(p*nkv+kvh)*hd:][:hd]) * scale
				scores[p] = s
				m = max(m, s)
			}
			// e_p = float32(exp(s_p − m)) (rules 3, 4); the denominator
			// Σ e_p and the numerators Σ e_p·v_pj are float64 sums of exact
			// products (rule 2), divided in float64 and rounded once:
			// o_j = float32((Σ_p e_p·v_pj) / Σ_p e_p). Every term depends
			// only on s_p and the global m, so a split-K kernel that sums the
			// same float64 terms in its own order gets the same float32.
			var sum float64
			clear(acc)
			for p := 0; p <= last; p++ {
				e := float64(float32(math.Exp(float64(scores[p] - m))))
				sum += e
				for j, vj := range kv.v[(p*nkv+kvh)*hd:][:hd] {
					acc[j] += e * float64(vj)
				}
			}
			o := attn[(t*nh+h)*hd:][:hd]
			for j := range o {
				o[j] = float32(acc[j] / sum)
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

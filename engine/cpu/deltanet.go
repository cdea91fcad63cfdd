package cpu

import (
	"math"

	"proscenium/engine/drama3"
)

// This file is the backbone's Gated DeltaNet mixer (MODEL.md §2):
// projections, the causal depthwise conv with its state, the gated delta rule
// on an fp32 state per value head, the gated output norm and out_proj. The
// delta rule has two forms that compute the same thing: the one-row
// recurrence (a step) and the chunked form (prefill, 64-row chunks).

// deltaNetChunk is the chunk length of the chunked form (the reference's).
const deltaNetChunk = 64

// deltaNetChannels is the conv width: q and k (LinKeyHeads·LinKeyDim each)
// then v (LinValueHeads·LinValueDim).
func deltaNetChannels(g *drama3.TextConfig) int {
	return 2*g.LinearNumKeyHeads*g.LinearKeyHeadDim + g.LinearNumValueHeads*g.LinearValueHeadDim
}

// deltaNetState is what a DeltaNet layer carries between rows.
type deltaNetState struct {
	conv []float32 // [ConvKernel−1, channels]: the last inputs of the conv, oldest first (zeros at start)
	s    []float32 // [LinValueHeads, LinKeyDim, LinValueDim]: the fp32 recurrent state
}

func newDeltaNetState(g *drama3.TextConfig) *deltaNetState {
	return &deltaNetState{
		conv: make([]float32, (g.ConvKernel-1)*deltaNetChannels(g)),
		s:    make([]float32, g.LinearNumValueHeads*g.LinearKeyHeadDim*g.LinearValueHeadDim),
	}
}

// deltaNetForward computes the mixer output out [n, Hidden] for n new rows x
// (already input-normed) and advances the state. n == 1 uses the recurrence,
// n > 1 the chunked form (as the reference does once a cache exists).
func deltaNetForward(out, x []float32, n int, w *drama3.DeltaNet[[]float32], g *drama3.TextConfig, st *deltaNetState) {
	hid := g.HiddenSize
	ch := deltaNetChannels(g)
	nv, dv := g.LinearNumValueHeads, g.LinearValueHeadDim
	qkv := make([]float32, n*ch)
	z := make([]float32, n*nv*dv)
	b := make([]float32, n*nv)
	a := make([]float32, n*nv)
	MatMulRows(qkv, w.InProjQKV, x, n, ch, hid)
	MatMulRows(z, w.InProjZ, x, n, nv*dv, hid)
	MatMulRows(b, w.InProjB, x, n, nv, hid)
	MatMulRows(a, w.InProjA, x, n, nv, hid)
	core := make([]float32, n*nv*dv)
	deltaNetMix(core, qkv, z, b, a, n, w, g, st)
	MatMulRows(out, w.OutProj, core, n, hid, nv*dv)
}

// deltaNetMix is the mixer between the input projections (qkv [n, channels],
// z [n, nv·dv], b and a [n, nv]; b and a are overwritten) and out_proj: the
// conv, the gates, the q/k norms, the delta rule and the gated norm into
// core [n, nv·dv].
func deltaNetMix(core, qkv, z, b, a []float32, n int, w *drama3.DeltaNet[[]float32], g *drama3.TextConfig, st *deltaNetState) {
	ch := deltaNetChannels(g)
	nv, dk, dv := g.LinearNumValueHeads, g.LinearKeyHeadDim, g.LinearValueHeadDim
	conv := causalConvSiLU(qkv, n, ch, w.Conv1D, g.ConvKernel, st.conv)

	// beta = sigmoid(b); g = −exp(A_log)·softplus(a + dt_bias), both fp32.
	beta, decay := b, a
	for t := 0; t < n; t++ {
		for h := 0; h < nv; h++ {
			i := t*nv + h
			beta[i] = Sigmoid(b[i])
			decay[i] = -float32(math.Exp(float64(w.ALog[h]))) * softplus(a[i]+w.DtBias[h])
		}
	}

	// L2-normalise q and k per key head; q also takes dk^-0.5.
	nk := g.LinearNumKeyHeads
	qScale := float32(1 / math.Sqrt(float64(dk)))
	for t := 0; t < n; t++ {
		row := conv[t*ch:]
		for h := 0; h < 2*nk; h++ {
			v := row[h*dk : (h+1)*dk]
			l2Normalize(v, 1e-6)
			if h < nk {
				for i := range v {
					v[i] *= qScale
				}
			}
		}
	}

	rule := gatedDeltaRuleRecurrent
	if n > 1 {
		rule = gatedDeltaRuleChunked
	}
	rule(core, conv, beta, decay, n, g, st.s)

	// Per value head: RMSNorm with a plain gain, times silu(z).
	parallelFor(n*nv, n*nv*dv*4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := core[i*dv : (i+1)*dv]
			RMSNorm(o, o, w.Norm, float32(g.RMSNormEps))
			zz := z[i*dv : (i+1)*dv]
			for j := range o {
				o[j] *= SiLU(zz[j])
			}
		}
	})
}

// causalConvSiLU runs the depthwise causal conv (kernel k, no bias) over n
// rows of ch channels preceded by the k−1 rows in state, applies SiLU, and
// leaves the last k−1 inputs in state. Each tap sum is a float64 sum of the
// exact products, rounded to float32 once (numerics contract, rule 2).
func causalConvSiLU(x []float32, n, ch int, weight []float32, k int, state []float32) []float32 {
	ext := make([]float32, (k-1+n)*ch)
	copy(ext, state)
	copy(ext[(k-1)*ch:], x)
	out := make([]float32, n*ch)
	parallelFor(n, n*ch*k, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			for c := 0; c < ch; c++ {
				var s float64 // rule 2: exact products summed in float64, rounded once
				for j := 0; j < k; j++ {
					s += float64(weight[c*k+j]) * float64(ext[(t+j)*ch+c])
				}
				out[t*ch+c] = SiLU(float32(s))
			}
		}
	})
	copy(state, ext[n*ch:])
	return out
}

// softplus is log(1 + e^x), with torch's linear branch above 20.
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log1p(math.Exp(float64(x))))
}

// l2Normalize scales v by 1/sqrt(Σv² + eps) (the reference's l2norm: eps
// inside the sum, not the mean). Σv² is a float64 sum of the exact squares;
// eps is added, the square root and the reciprocal taken in float64, and the
// factor rounded to float32 once (rules 2 and 3); each v[i]·inv is one
// float32 multiply.
func l2Normalize(v []float32, eps float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(ss+float64(eps)))
	for i := range v {
		v[i] *= inv
	}
}

// transposeTimes sets dst[j] = Σ_i x[i]·s[i·len(dst)+j] (Sᵀx for a [len(x),
// len(dst)] state) as float64 sums of the exact products, each rounded to
// float32 once (rule 2), so any order of the rows gives the same bits; acc
// is len(dst) float64s of scratch.
func transposeTimes(dst []float32, s, x []float32, acc []float64) {
	dv := len(dst)
	clear(acc)
	for i, xi := range x {
		row := s[i*dv : (i+1)*dv]
		for j, sij := range row {
			acc[j] += float64(xi) * float64(sij)
		}
	}
	for j := range dst {
		dst[j] = float32(acc[j])
	}
}

// deltaInputs locates the per-head vectors of the conv output: row t holds
// q (nk heads of dk), k (nk heads of dk), v (nv heads of dv). Value head h
// reads key head h / (nv/nk).
type deltaInputs struct {
	conv        []float32
	ch          int
	nk, nv      int
	dk, dv      int
	beta, decay []float32 // [n, nv]
}

func (d *deltaInputs) q(t, h int) []float32 {
	kh := h / (d.nv / d.nk)
	return d.conv[t*d.ch+kh*d.dk:][:d.dk]
}

func (d *deltaInputs) k(t, h int) []float32 {
	kh := h / (d.nv / d.nk)
	return d.conv[t*d.ch+(d.nk+kh)*d.dk:][:d.dk]
}

func (d *deltaInputs) v(t, h int) []float32 {
	return d.conv[t*d.ch+2*d.nk*d.dk+h*d.dv:][:d.dv]
}

func newDeltaInputs(conv, beta, decay []float32, g *drama3.TextConfig) *deltaInputs {
	return &deltaInputs{conv: conv, ch: deltaNetChannels(g), nk: g.LinearNumKeyHeads, nv: g.LinearNumValueHeads,
		dk: g.LinearKeyHeadDim, dv: g.LinearValueHeadDim, beta: beta, decay: decay}
}

// gatedDeltaRuleRecurrent applies the delta rule one row at a time, for each
// value head h with state S [dk, dv]:
//
//	S ← exp(g)·S;  u = Sᵀk;  S ← S + k ⊗ beta·(v − u);  o = Sᵀq.
//
// u and o are float64 sums rounded once (transposeTimes, rule 2); e^g·S_ij,
// beta·(v_j − u_j) and S_ij + k_i·delta_j are float32 operations, one
// rounding each (rule 4).
//
// core receives o, [n, nv, dv]; state is updated in place.
func gatedDeltaRuleRecurrent(core, conv, beta, decay []float32, n int, g *drama3.TextConfig, state []float32) {
	d := newDeltaInputs(conv, beta, decay, g)
	nv, dk, dv := d.nv, d.dk, d.dv
	parallelFor(nv, n*nv*dk*dv*4, func(lo, hi int) {
		delta := make([]float32, dv)
		acc := make([]float64, dv)
		for h := lo; h < hi; h++ {
			s := state[h*dk*dv : (h+1)*dk*dv]
			for t := 0; t < n; t++ {
				q, k, v := d.q(t, h), d.k(t, h), d.v(t, h)
				bt := beta[t*nv+h]
				eg := float32(math.Exp(float64(decay[t*nv+h])))
				for i := range s {
					s[i] *= eg
				}
				// delta = beta·(v − u), u = Sᵀk rounded once (rule 2), then
				// float32 operations (rule 4).
				transposeTimes(delta, s, k, acc)
				for j := range delta {
					delta[j] = bt * (v[j] - delta[j])
				}
				// S_ij += k_i·delta_j, the product rounded before the add.
				for i := 0; i < dk; i++ {
					AddScaled(s[i*dv:(i+1)*dv], delta, k[i])
				}
				transposeTimes(core[(t*nv+h)*dv:][:dv], s, q, acc)
			}
		}
	})
}

// gatedDeltaRuleChunked computes the same outputs and final state as the
// recurrence over chunks of up to 64 rows. Within a chunk starting from state
// S0, with c_i the cumulative log decay up to row i and
// A[i][j] = beta_i (k_i·k_j) e^{c_i−c_j} for j < i, the state corrections
// solve (I + A)·Δ = beta·v − (beta e^{c} k)·S0 (forward substitution), then
//
//	o_i = e^{c_i} S0ᵀq_i + Σ_{j≤i} (q_i·k_j) e^{c_i−c_j} Δ_j,
//	S   = e^{c_L} S0 + Σ_j e^{c_L−c_j} k_j ⊗ Δ_j.
//
// Numerics (docs/MODEL.md, "Numerics contract"): q_i·k_j and k_i·k_j are Dot
// (rule 1); c is a float32 running sum; every other sum (the substitutions,
// W·S0, S0ᵀq, the Δ terms of o and of S) is a float32 chain in the order
// written here, each product rounded before its add (rule 4): cheap, and
// kernels/deltanet_chunk.cu follows the same order. A call of n > 1 rows
// (and only such a call) takes this form, so its bits differ from the
// recurrence's (within 1e-5, TestDeltaRuleChunkedMatchesRecurrent).
func gatedDeltaRuleChunked(core, conv, beta, decay []float32, n int, g *drama3.TextConfig, state []float32) {
	d := newDeltaInputs(conv, beta, decay, g)
	nv, dk, dv := d.nv, d.dk, d.dv
	const c = deltaNetChunk
	parallelFor(nv, n*nv*(c*(dk+dv)+dk*dv)*2, func(lo, hi int) {
		cum := make([]float32, c)
		amat := make([]float32, c*c) // A[i][j], j < i
		delta := make([]float32, c*dv)
		wk := make([]float32, c*dk) // (I+A)^-1 (beta e^c k)
		for h := lo; h < hi; h++ {
			s := state[h*dk*dv : (h+1)*dk*dv]
			for t0 := 0; t0 < n; t0 += c {
				l := min(c, n-t0)
				var acc float32
				for i := 0; i < l; i++ {
					acc += decay[(t0+i)*nv+h]
					cum[i] = acc
				}
				for i := 0; i < l; i++ {
					ki := d.k(t0+i, h)
					bi := beta[(t0+i)*nv+h]
					for j := 0; j < i; j++ {
						amat[i*c+j] = bi * Dot(ki, d.k(t0+j, h)) * float32(math.Exp(float64(cum[i]-cum[j])))
					}
				}
				// Forward substitution for Δ0 = (I+A)^-1 beta·v and W = (I+A)^-1 beta e^c k.
				for i := 0; i < l; i++ {
					bi := beta[(t0+i)*nv+h]
					di := delta[i*dv : (i+1)*dv]
					vi := d.v(t0+i, h)
					for j := range di {
						di[j] = bi * vi[j]
					}
					wi := wk[i*dk : (i+1)*dk]
					ki := d.k(t0+i, h)
					ec := bi * float32(math.Exp(float64(cum[i])))
					for j := range wi {
						wi[j] = ec * ki[j]
					}
					for j := 0; j < i; j++ {
						aij := amat[i*c+j]
						AddScaled(di, delta[j*dv:(j+1)*dv], -aij)
						AddScaled(wi, wk[j*dk:(j+1)*dk], -aij)
					}
				}
				// Δ = Δ0 − W·S0.
				for i := 0; i < l; i++ {
					di := delta[i*dv : (i+1)*dv]
					wi := wk[i*dk : (i+1)*dk]
					for a := 0; a < dk; a++ {
						AddScaled(di, s[a*dv:(a+1)*dv], -wi[a])
					}
				}
				// Outputs.
				for i := 0; i < l; i++ {
					qi := d.q(t0+i, h)
					o := core[((t0+i)*nv+h)*dv:][:dv]
					clear(o)
					for a := 0; a < dk; a++ {
						AddScaled(o, s[a*dv:(a+1)*dv], qi[a])
					}
					ec := float32(math.Exp(float64(cum[i])))
					for j := range o {
						o[j] *= ec
					}
					for j := 0; j <= i; j++ {
						w := Dot(qi, d.k(t0+j, h)) * float32(math.Exp(float64(cum[i]-cum[j])))
						AddScaled(o, delta[j*dv:(j+1)*dv], w)
					}
				}
				// State update.
				last := cum[l-1]
				el := float32(math.Exp(float64(last)))
				for i := range s {
					s[i] *= el
				}
				for j := 0; j < l; j++ {
					kj := d.k(t0+j, h)
					dj := delta[j*dv : (j+1)*dv]
					e := float32(math.Exp(float64(last - cum[j])))
					for a := 0; a < dk; a++ {
						AddScaled(s[a*dv:(a+1)*dv], dj, e*kj[a])
					}
				}
			}
		}
	})
}

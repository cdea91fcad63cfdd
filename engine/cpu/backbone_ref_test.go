package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/drama3"
)

// This file is an independent float64 re-computation of the backbone, written
// straight from MODEL.md §2 (the one-row recurrence only, full attention
// recomputed over the whole prefix each row, no caches shared with the
// float32 code), used to check the float32 backbone to ~1e-5.

type ref64 struct {
	w *testBackbone
	g drama3.TextConfig
}

func f64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func (r *ref64) mat(w []float32, x []float64, rows int) []float64 {
	cols := len(x)
	out := make([]float64, rows)
	for i := range out {
		var s float64
		for c := 0; c < cols; c++ {
			s += float64(w[i*cols+c]) * x[c]
		}
		out[i] = s
	}
	return out
}

func rms64(x []float64, w []float32, eps float32, zeroCentred bool) []float64 {
	var ss float64
	for _, v := range x {
		ss += v * v
	}
	inv := 1 / math.Sqrt(ss/float64(len(x))+float64(eps))
	out := make([]float64, len(x))
	for i, v := range x {
		g := float64(w[i])
		if zeroCentred {
			g += 1
		}
		out[i] = v * inv * g
	}
	return out
}

func sig64(x float64) float64  { return 1 / (1 + math.Exp(-x)) }
func silu64(x float64) float64 { return x * sig64(x) }

// forward returns the final-norm hidden states of all rows.
func (r *ref64) forward(ids []int) [][]float64 {
	g := &r.g
	n, hid := len(ids), g.HiddenSize
	x := make([][]float64, n)
	for t, id := range ids {
		x[t] = f64(r.w.Embed[id*hid : (id+1)*hid])
	}
	for li, kind := range g.LayerTypes {
		lw := &r.w.Layers[li]
		normed := make([][]float64, n)
		for t := range x {
			normed[t] = rms64(x[t], lw.InputNorm, float32(g.RMSNormEps), true)
		}
		var mixed [][]float64
		if kind == drama3.LinearAttention {
			mixed = r.deltaNet(normed, lw.Linear)
		} else {
			mixed = r.attention(normed, lw.Full)
		}
		for t := range x {
			for i := range x[t] {
				x[t][i] += mixed[t][i]
			}
			m := r.moe(rms64(x[t], lw.PostAttentionNorm, float32(g.RMSNormEps), true), &lw.MoE)
			for i := range x[t] {
				x[t][i] += m[i]
			}
		}
	}
	for t := range x {
		x[t] = rms64(x[t], r.w.FinalNorm, float32(g.RMSNormEps), true)
	}
	return x
}

func (r *ref64) deltaNet(x [][]float64, w *drama3.DeltaNet[[]float32]) [][]float64 {
	g := &r.g
	n := len(x)
	ch := deltaNetChannels(g)
	nk, nv, dk, dv, k := g.LinearNumKeyHeads, g.LinearNumValueHeads, g.LinearKeyHeadDim, g.LinearValueHeadDim, g.ConvKernel
	qkv := make([][]float64, n)
	for t := range x {
		qkv[t] = r.mat(w.InProjQKV, x[t], ch)
	}
	s := make([][]float64, nv) // [dk*dv] per value head
	for h := range s {
		s[h] = make([]float64, dk*dv)
	}
	out := make([][]float64, n)
	for t := 0; t < n; t++ {
		conv := make([]float64, ch)
		for c := 0; c < ch; c++ {
			var acc float64
			for j := 0; j < k; j++ {
				if src := t - (k - 1) + j; src >= 0 {
					acc += float64(w.Conv1D[c*k+j]) * qkv[src][c]
				}
			}
			conv[c] = silu64(acc)
		}
		l2 := func(v []float64) []float64 {
			var ss float64
			for _, e := range v {
				ss += e * e
			}
			o := make([]float64, len(v))
			for i, e := range v {
				o[i] = e / math.Sqrt(ss+1e-6)
			}
			return o
		}
		z := r.mat(w.InProjZ, x[t], nv*dv)
		b := r.mat(w.InProjB, x[t], nv)
		a := r.mat(w.InProjA, x[t], nv)
		core := make([]float64, nv*dv)
		for h := 0; h < nv; h++ {
			kh := h / (nv / nk)
			q := l2(conv[kh*dk : (kh+1)*dk])
			for i := range q {
				q[i] /= math.Sqrt(float64(dk))
			}
			kv := l2(conv[(nk+kh)*dk : (nk+kh+1)*dk])
			v := conv[2*nk*dk+h*dv : 2*nk*dk+(h+1)*dv]
			beta := sig64(b[h])
			sp := math.Log1p(math.Exp(a[h] + float64(w.DtBias[h])))
			decay := math.Exp(-math.Exp(float64(w.ALog[h])) * sp)
			S := s[h]
			for i := range S {
				S[i] *= decay
			}
			for j := 0; j < dv; j++ {
				var u float64
				for i := 0; i < dk; i++ {
					u += S[i*dv+j] * kv[i]
				}
				d := beta * (v[j] - u)
				for i := 0; i < dk; i++ {
					S[i*dv+j] += kv[i] * d
				}
			}
			o := make([]float64, dv)
			for j := range o {
				for i := 0; i < dk; i++ {
					o[j] += S[i*dv+j] * q[i]
				}
			}
			o = rms64(o, w.Norm, float32(g.RMSNormEps), false)
			for j := range o {
				core[h*dv+j] = o[j] * silu64(z[h*dv+j])
			}
		}
		out[t] = r.mat(w.OutProj, core, g.HiddenSize)
	}
	return out
}

func (r *ref64) attention(x [][]float64, w *drama3.Attention[[]float32]) [][]float64 {
	g := &r.g
	n, hd, nh, nkv := len(x), g.HeadDim, g.NumHeads, g.NumKVHeads
	rope := func(v []float64, pos int) {
		half := g.RotaryDim() / 2
		for i := 0; i < half; i++ {
			f := math.Pow(g.RopeTheta, -float64(2*i)/float64(g.RotaryDim()))
			c, s := math.Cos(float64(pos)*f), math.Sin(float64(pos)*f)
			x1, x2 := v[i], v[i+half]
			v[i], v[i+half] = x1*c-x2*s, x2*c+x1*s
		}
	}
	qs, gates, ks, vs := make([][]float64, n), make([][]float64, n), make([][]float64, n), make([][]float64, n)
	for t := range x {
		qg := r.mat(w.QProj, x[t], nh*2*hd)
		kk := r.mat(w.KProj, x[t], nkv*hd)
		vs[t] = r.mat(w.VProj, x[t], nkv*hd)
		qs[t], gates[t], ks[t] = make([]float64, nh*hd), make([]float64, nh*hd), make([]float64, nkv*hd)
		for h := 0; h < nh; h++ {
			q := rms64(qg[h*2*hd:h*2*hd+hd], w.QNorm, float32(g.RMSNormEps), true)
			rope(q, t)
			copy(qs[t][h*hd:], q)
			copy(gates[t][h*hd:], qg[h*2*hd+hd:(h+1)*2*hd])
		}
		for h := 0; h < nkv; h++ {
			kh := rms64(kk[h*hd:(h+1)*hd], w.KNorm, float32(g.RMSNormEps), true)
			rope(kh, t)
			copy(ks[t][h*hd:], kh)
		}
	}
	out := make([][]float64, n)
	for t := 0; t < n; t++ {
		o := causalAttention64(qs, ks, vs, t, nh, nkv, hd)
		for i := range o {
			o[i] *= sig64(gates[t][i])
		}
		out[t] = r.mat(w.OProj, o, g.HiddenSize)
	}
	return out
}

// causalAttention64 is row t's grouped-query causal attention in float64 (the
// backbone's and the tower's references): per query head h, the softmax of
// q·k/√hd over rows 0…t of KV head h/(nh/nkv), applied to their values.
// q[t] holds nh·hd values, k[p] and v[p] nkv·hd.
func causalAttention64(q, k, v [][]float64, t, nh, nkv, hd int) []float64 {
	o := make([]float64, nh*hd)
	for h := 0; h < nh; h++ {
		kvh := h / (nh / nkv)
		sc := make([]float64, t+1)
		m := math.Inf(-1)
		for p := 0; p <= t; p++ {
			var d float64
			for i := 0; i < hd; i++ {
				d += q[t][h*hd+i] * k[p][kvh*hd+i]
			}
			sc[p] = d / math.Sqrt(float64(hd))
			m = math.Max(m, sc[p])
		}
		var sum float64
		for p := range sc {
			sc[p] = math.Exp(sc[p] - m)
			sum += sc[p]
		}
		for i := 0; i < hd; i++ {
			var acc float64
			for p := range sc {
				acc += sc[p] / sum * v[p][kvh*hd+i]
			}
			o[h*hd+i] = acc
		}
	}
	return o
}

func (r *ref64) moe(x []float64, w *drama3.MoE[[]float32]) []float64 {
	g := &r.g
	logits := r.mat(w.Router, x, g.NumExperts)
	m := math.Inf(-1)
	for _, v := range logits {
		m = math.Max(m, v)
	}
	probs := make([]float64, len(logits))
	var sum float64
	for i, v := range logits {
		probs[i] = math.Exp(v - m)
		sum += probs[i]
	}
	chosen := make([]bool, len(probs))
	var picked []int
	var psum float64
	for len(picked) < g.NumExpertsPerTok {
		best := -1
		for e, p := range probs {
			if !chosen[e] && (best < 0 || p > probs[best]) {
				best = e
			}
		}
		chosen[best] = true
		picked = append(picked, best)
		psum += probs[best] / sum
	}
	ffn := func(e *drama3.Expert[[]float32], f int) []float64 {
		gt, up := r.mat(e.Gate, x, f), r.mat(e.Up, x, f)
		for i := range gt {
			gt[i] = silu64(gt[i]) * up[i]
		}
		return r.mat(e.Down, gt, g.HiddenSize)
	}
	out := make([]float64, g.HiddenSize)
	for _, e := range picked {
		y := ffn(&w.Experts[e], g.MoEIntermediate)
		wt := probs[e] / sum / psum
		for i := range out {
			out[i] += wt * y[i]
		}
	}
	sh := ffn(&drama3.Expert[[]float32]{Gate: w.SharedGate, Up: w.SharedUp, Down: w.SharedDown}, g.SharedIntermediate)
	var sg float64
	for i := range x {
		sg += float64(w.SharedExpertGate[i]) * x[i]
	}
	for i := range out {
		out[i] += sig64(sg) * sh[i]
	}
	return out
}

// TestBackboneAgainstFloat64 checks the float32 backbone (chunked prefill and
// the one-row recurrence) against the float64 re-computation on both test
// geometries, over more than two 64-row chunks.
func TestBackboneAgainstFloat64(t *testing.T) {
	for name, g := range map[string]drama3.TextConfig{"like": geometryLike(), "odd": geometryOdd()} {
		t.Run(name, func(t *testing.T) {
			w := randomBackbone(g, 11)
			ids := randomIDs(rand.New(rand.NewPCG(12, 13)), 140, g.VocabSize)
			ref := (&ref64{w: w, g: g}).forward(ids)
			want := make([]float32, 0, len(ids)*g.HiddenSize)
			for _, row := range ref {
				for _, v := range row {
					want = append(want, float32(v))
				}
			}
			whole := runSplits(t, w, ids, []int{len(ids)})
			if e, row := maxRowErr(whole, want, g.HiddenSize); !(e < 2e-5) {
				t.Errorf("prefill: row %d relative error %g", row, e)
			}
			steps := runSplits(t, w, ids, append([]int{9}, ones(len(ids)-9)...))
			if e, row := maxRowErr(steps, want, g.HiddenSize); !(e < 2e-5) {
				t.Errorf("steps: row %d relative error %g", row, e)
			}
		})
	}
}

func ones(n int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = 1
	}
	return o
}

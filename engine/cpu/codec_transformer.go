package cpu

import (
	"math"

	"proscenium/engine/drama3"
)

// The post-module (modded_dac.WindowLimitedTransformer) at the frame rate:
// pre-norm blocks h = x + γa·Attn(RMSNorm(x)), out = h + γf·FFN(RMSNorm(h))
// with LayerScale gains γ, fused wqkv, no biases, SwiGLU FFN w2(silu(w1 x) ·
// w3 x), RMSNorm with a plain gain (eps 1e-5), then a final norm. Attention is
// causal and window-limited: row r attends rows r−W+1 … r. RoPE rotates
// interleaved pairs (x[2i], x[2i+1]) of each 64-wide head by pos·θ_i with
// θ_i = 1 / base^(2i/64), using the reference's cos/sin table rounded to
// bfloat16; pos is the absolute frame index of the take.

// codecLinear is a bias-free Linear stored as a kernel-1 codecConv.
func codecLinear(w []float32, out, in int) *codecConv {
	return &codecConv{in: in, out: out, kernel: 1, dilation: 1, w: w, bias: make([]float32, out)}
}

// codecBlock is one transformer layer.
type codecBlock struct {
	dim, heads, window int
	ropeFreq           []float32 // θ_i, float32 as the reference forms them
	attnNorm, ffnNorm  []float32
	wqkv, wo           *codecConv
	w1, w3, w2         *codecConv
	gammaAttn, gammaFF []float32
}

func (b *codecBlock) label() string { return "post" }
func (b *codecBlock) up() int       { return 1 }
func (b *codecBlock) history() int  { return b.window - 1 }
func (b *codecBlock) channels() int { return b.dim }

// codecRMSNormStage is the post-module's final norm.
type codecRMSNormStage struct{ w []float32 }

func (n *codecRMSNormStage) label() string { return "post" }
func (n *codecRMSNormStage) up() int       { return 1 }
func (n *codecRMSNormStage) history() int  { return 0 }
func (n *codecRMSNormStage) channels() int { return len(n.w) }

func (n *codecRMSNormStage) run(in codecSignal, outStart int, ws *CodecScratch) codecSignal {
	out := ws.signal(in.start, in.n, in.ch)
	for t := in.start; t < in.end(); t++ {
		RMSNorm(out.row(t), in.row(t), n.w, codecNormEps)
	}
	return out
}

// codecLinearStage is the post-module's optional input_proj/output_proj
// (Linear with bias; absent when the widths agree, as in S2).
type codecLinearStage struct{ *codecConv }

func (s codecLinearStage) label() string { return "post" }
func (s codecLinearStage) up() int       { return 1 }
func (s codecLinearStage) channels() int { return s.out }
func (s codecLinearStage) run(in codecSignal, outStart int, ws *CodecScratch) codecSignal {
	out := ws.signal(in.start, in.n, s.out)
	s.apply(out, in)
	return out
}

func newCodecPostModule(p *drama3.CodecPost, g *drama3.CodecGeometry) []codecStage {
	return newCodecTransformer(p, g.PostDim, g.PostFFN, g.Window, g.RopeBase)
}

// newCodecTransformer builds a window-limited transformer (the post-module,
// the pre-module, an encoder block's) of width dim, SwiGLU width ffn and
// attention window window.
func newCodecTransformer(p *drama3.CodecPost, dim, ffn, window int, ropeBase float64) []codecStage {
	var stages []codecStage
	if c := p.InputProj; c != nil {
		stages = append(stages, codecLinearStage{&codecConv{in: c.In, out: c.Out, kernel: 1, dilation: 1, w: c.W, bias: c.Bias}})
	}
	freq := drama3.CodecRopeFreqs(ropeBase)
	for i := range p.Layers {
		l := &p.Layers[i]
		stages = append(stages, &codecBlock{dim: dim, heads: dim / codecHeadDim, window: window, ropeFreq: freq,
			attnNorm:  l.AttentionNorm,
			ffnNorm:   l.FFNNorm,
			wqkv:      codecLinear(l.WQKV, 3*dim, dim),
			wo:        codecLinear(l.WO, dim, dim),
			w1:        codecLinear(l.W1, ffn, dim),
			w3:        codecLinear(l.W3, ffn, dim),
			w2:        codecLinear(l.W2, dim, ffn),
			gammaAttn: l.GammaAttn,
			gammaFF:   l.GammaFF,
		})
	}
	stages = append(stages, &codecRMSNormStage{w: p.Norm})
	if c := p.OutputProj; c != nil {
		stages = append(stages, codecLinearStage{&codecConv{in: c.In, out: c.Out, kernel: 1, dilation: 1, w: c.W, bias: c.Bias}})
	}
	return stages
}

// codecRope rotates the interleaved pairs of one head in place.
func codecRope(x, cos, sin []float32) {
	for i := range cos {
		x0, x1 := x[2*i], x[2*i+1]
		x[2*i] = x0*cos[i] - x1*sin[i]
		x[2*i+1] = x1*cos[i] + x0*sin[i]
	}
}

// run computes rows [max(in.start, outStart), in.end()); rows earlier than
// outStart serve only as keys and values.
func (b *codecBlock) run(in codecSignal, outStart int, ws *CodecScratch) codecSignal {
	kv0 := max(in.start, outStart-(b.window-1))
	o0 := max(in.start, outStart)
	end := in.end()
	dim := b.dim

	// q, k, v for rows [kv0, end), RoPE at each row's absolute position.
	xn := ws.signal(kv0, end-kv0, dim)
	for t := kv0; t < end; t++ {
		RMSNorm(xn.row(t), in.row(t), b.attnNorm, codecNormEps)
	}
	qkv := ws.signal(kv0, end-kv0, 3*dim)
	b.wqkv.apply(qkv, xn)
	ws.release(xn)
	half := codecHeadDim / 2
	parallelFor(qkv.n, qkv.n*b.heads*codecHeadDim*8, func(lo, hi int) {
		cos, sin := make([]float32, half), make([]float32, half)
		for t := kv0 + lo; t < kv0+hi; t++ {
			drama3.CodecRopeRow(cos, sin, b.ropeFreq, t)
			r := qkv.row(t)
			for h := 0; h < 2*b.heads; h++ { // the q heads, then the k heads
				codecRope(r[h*codecHeadDim:(h+1)*codecHeadDim], cos, sin)
			}
		}
	})

	// Windowed causal attention for the output rows.
	att := ws.signal(o0, end-o0, dim)
	scale := float32(1 / math.Sqrt(codecHeadDim))
	parallelFor(att.n*b.heads, att.n*b.heads*b.window*codecHeadDim*2, func(lo, hi int) {
		scores := make([]float32, b.window)
		for k := lo; k < hi; k++ {
			t, h := o0+k/b.heads, k%b.heads
			q := qkv.row(t)[h*codecHeadDim : (h+1)*codecHeadDim]
			j0 := max(kv0, t-b.window+1) // kv0 is 0 or at most t−W+1, bar decode's test cut
			sc := scores[:t-j0+1]
			m := float32(math.Inf(-1))
			for j := j0; j <= t; j++ {
				kr := qkv.row(j)[dim+h*codecHeadDim : dim+(h+1)*codecHeadDim]
				s := codecDot(q, kr) * scale
				sc[j-j0] = s
				m = max(m, s)
			}
			var sum float64
			for i, s := range sc {
				e := float32(math.Exp(float64(s - m)))
				sc[i] = e
				sum += float64(e)
			}
			inv := float32(1 / sum)
			y := att.row(t)[h*codecHeadDim : (h+1)*codecHeadDim]
			for d := range y {
				y[d] = 0
			}
			for j := j0; j <= t; j++ {
				p := sc[j-j0] * inv
				v := qkv.row(j)[2*dim+h*codecHeadDim : 2*dim+(h+1)*codecHeadDim]
				for d, vv := range v {
					y[d] += p * vv
				}
			}
		}
	})
	ws.release(qkv)

	// h = x + γa·wo(att)
	out := ws.signal(o0, end-o0, dim)
	b.wo.apply(out, att)
	ws.release(att)
	for t := o0; t < end; t++ {
		r, x := out.row(t), in.row(t)
		for i := range r {
			r[i] = x[i] + r[i]*b.gammaAttn[i]
		}
	}

	// out = h + γf·w2(silu(w1 hn) · w3 hn)
	hn := ws.signal(o0, end-o0, dim)
	for t := o0; t < end; t++ {
		RMSNorm(hn.row(t), out.row(t), b.ffnNorm, codecNormEps)
	}
	gate := ws.signal(o0, end-o0, b.w1.out)
	upv := ws.signal(o0, end-o0, b.w3.out)
	b.w1.apply(gate, hn)
	b.w3.apply(upv, hn)
	ws.release(hn)
	SwiGLU(gate.data, gate.data, upv.data)
	ws.release(upv)
	ff := ws.signal(o0, end-o0, dim)
	b.w2.apply(ff, gate)
	ws.release(gate)
	for t := o0; t < end; t++ {
		r, f := out.row(t), ff.row(t)
		for i := range r {
			r[i] = r[i] + f[i]*b.gammaFF[i]
		}
	}
	ws.release(ff)
	return out
}

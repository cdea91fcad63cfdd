package cpu

import "proscenium/engine/drama3"

// quantizer.upsample: stages of a transposed conv (kernel = stride, with
// bias, no weight norm; CausalTransConvNet trims kernel − stride = 0) and a
// ConvNeXt block: causal depthwise conv k7 → LayerNorm (eps 1e-6) → Linear
// ×4 → GELU (erf) → Linear → ×γ → + input.

// codecTransConvStage is a causal transposed conv as a stage.
type codecTransConvStage struct {
	conv   *codecConv // the equivalent conv at the input rate, see newCodecTransConv
	stride int
	out    int
	stage  string
}

func (s *codecTransConvStage) label() string { return s.stage }
func (s *codecTransConvStage) up() int       { return s.stride }
func (s *codecTransConvStage) history() int  { return s.conv.history() }
func (s *codecTransConvStage) channels() int { return s.out }

func (s *codecTransConvStage) run(in codecSignal, outStart int, ws *CodecScratch) codecSignal {
	i0 := max(in.start, outStart/s.stride)
	rows := codecSignal{start: i0, n: in.end() - i0, ch: s.conv.out, data: ws.get((in.end() - i0) * s.conv.out)}
	s.conv.apply(rows, in)
	// [i][phase][o] is [i·stride + phase][o].
	return codecSignal{start: i0 * s.stride, n: rows.n * s.stride, ch: s.out, data: rows.data}
}

// codecConvNeXt is one ConvNeXt block.
type codecConvNeXt struct {
	dw           codecDepthwise
	normW, normB []float32
	pw1, pw2     *codecConv
	gamma        []float32
	ch           int
}

func (b *codecConvNeXt) label() string { return "upsample" }
func (b *codecConvNeXt) up() int       { return 1 }
func (b *codecConvNeXt) history() int  { return b.dw.history() }
func (b *codecConvNeXt) channels() int { return b.ch }

func (b *codecConvNeXt) run(in codecSignal, outStart int, ws *CodecScratch) codecSignal {
	o0 := max(in.start, outStart)
	n := in.end() - o0
	x := ws.signal(o0, n, b.ch)
	b.dw.apply(x, in)
	parallelFor(n, n*b.ch*8, func(lo, hi int) {
		for t := o0 + lo; t < o0+hi; t++ {
			r := x.row(t)
			codecLayerNorm(r, r, b.normW, b.normB, codecConvNeXtEps)
		}
	})
	hid := ws.signal(o0, n, b.pw1.out)
	b.pw1.apply(hid, x)
	parallelFor(len(hid.data), len(hid.data)*16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			hid.data[i] = codecGELU(hid.data[i])
		}
	})
	b.pw2.apply(x, hid)
	ws.release(hid)
	for t := o0; t < in.end(); t++ {
		r, src := x.row(t), in.row(t)
		for i := range r {
			r[i] = src[i] + b.gamma[i]*r[i]
		}
	}
	return x
}

func newCodecUpsample(ups []drama3.CodecUpsample) []codecStage {
	var stages []codecStage
	for i := range ups {
		u := &ups[i]
		up := u.Up
		stages = append(stages, &codecTransConvStage{conv: newCodecTransConv(up.W, up.Bias, up.In, up.Out, up.Kernel, up.Stride), stride: up.Stride, out: up.Out, stage: "upsample"})
		stages = append(stages, newCodecConvNeXt(up.Out, u.DW, u.NormW, u.NormB, u.PW1, u.PW2, u.Gamma))
	}
	return stages
}

// newCodecConvNeXt builds a ConvNeXt block of ch channels (the upsample's
// and the downsample's).
func newCodecConvNeXt(ch int, dw drama3.CodecConv, normW, normB []float32, pw1, pw2 drama3.CodecConv, gamma []float32) *codecConvNeXt {
	return &codecConvNeXt{ch: ch,
		dw:    codecDepthwise{ch: ch, kernel: dw.Kernel, w: dw.W, bias: dw.Bias},
		normW: normW,
		normB: normB,
		pw1:   &codecConv{in: ch, out: pw1.Out, kernel: 1, dilation: 1, w: pw1.W, bias: pw1.Bias},
		pw2:   &codecConv{in: pw2.In, out: ch, kernel: 1, dilation: 1, w: pw2.W, bias: pw2.Bias},
		gamma: gamma,
	}
}

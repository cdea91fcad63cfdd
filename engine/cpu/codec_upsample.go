package cpu

import "fmt"

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

func (c *Codec) loadUpsample(l *codecLoader, g *CodecGeometry) []codecStage {
	var stages []codecStage
	ch := g.Latent
	for i := 0; l.has(fmt.Sprintf("quantizer.upsample.%d.0.conv.weight", i)); i++ {
		p := fmt.Sprintf("quantizer.upsample.%d", i)
		sh := l.shape(p + ".0.conv.weight")
		if len(sh) != 3 || sh[0] != ch || sh[2] < 1 {
			l.fail("codec: tensor %s.0.conv.weight has shape %v, want [%d, out, kernel]", p, sh, ch)
			return nil
		}
		out, k := sh[1], sh[2]
		// The reference builds these with kernel_size = stride = factor.
		w := l.f32(p+".0.conv.weight", ch, out, k)
		bias := l.f32(p+".0.conv.bias", out)
		if l.err != nil {
			return nil
		}
		stages = append(stages, &codecTransConvStage{conv: newCodecTransConv(w, bias, ch, out, k, k), stride: k, out: out, stage: "upsample"})
		ch = out
		b := l.convNeXt(p+".1", ch)
		if l.err != nil {
			return nil
		}
		stages = append(stages, b)
		g.UpsampleStrides = append(g.UpsampleStrides, k)
	}
	if len(stages) == 0 {
		l.fail("codec: missing tensor quantizer.upsample.0.0.conv.weight")
	}
	return stages
}

// convNeXt reads the ConvNeXt block at prefix p with ch channels.
func (l *codecLoader) convNeXt(p string, ch int) *codecConvNeXt {
	dwSh := l.shape(p + ".dwconv.conv.weight")
	if len(dwSh) != 3 || dwSh[0] != ch || dwSh[1] != 1 {
		l.fail("codec: tensor %s.dwconv.conv.weight has shape %v, want [%d, 1, kernel]", p, dwSh, ch)
		return nil
	}
	hid := ch * 4
	if s := l.shape(p + ".pwconv1.weight"); len(s) == 2 {
		hid = s[0]
	}
	return &codecConvNeXt{ch: ch,
		dw:    codecDepthwise{ch: ch, kernel: dwSh[2], w: l.f32(p+".dwconv.conv.weight", dwSh...), bias: l.f32(p+".dwconv.conv.bias", ch)},
		normW: l.f32(p+".norm.weight", ch),
		normB: l.f32(p+".norm.bias", ch),
		pw1:   &codecConv{in: ch, out: hid, kernel: 1, dilation: 1, w: l.f32(p+".pwconv1.weight", hid, ch), bias: l.f32(p+".pwconv1.bias", hid)},
		pw2:   &codecConv{in: hid, out: ch, kernel: 1, dilation: 1, w: l.f32(p+".pwconv2.weight", ch, hid), bias: l.f32(p+".pwconv2.bias", ch)},
		gamma: l.f32(p+".gamma", ch),
	}
}

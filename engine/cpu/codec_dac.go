package cpu

import (
	"fmt"
	"math"
)

// The DAC decoder (modded_dac.Decoder, causal): a weight-normed causal conv
// k7 from the latent to DecoderDim channels; blocks of Snake → causal
// weight-normed transposed conv (kernel 2·stride) → three residual units
// (Snake → conv k7 dilated → Snake → conv k1, plus the input; dilations 1, 3,
// 9), halving the channels; then Snake → conv k7 to one channel → tanh.

// codecConvStage is a causal conv as a stage, optionally followed by tanh.
type codecConvStage struct {
	conv *codecConv
	tanh bool
}

func (s *codecConvStage) label() string { return "decoder" }
func (s *codecConvStage) up() int       { return 1 }
func (s *codecConvStage) history() int  { return s.conv.history() }
func (s *codecConvStage) channels() int { return s.conv.out }

func (s *codecConvStage) run(in codecSignal, outStart int, ws *CodecScratch) codecSignal {
	o0 := max(in.start, outStart)
	out := ws.signal(o0, in.end()-o0, s.conv.out)
	s.conv.apply(out, in)
	if s.tanh {
		for i, v := range out.data {
			out.data[i] = float32(math.Tanh(float64(v)))
		}
	}
	return out
}

// codecSnakeStage applies Snake1d.
type codecSnakeStage struct{ *codecSnake }

func (s codecSnakeStage) label() string { return "decoder" }
func (s codecSnakeStage) up() int       { return 1 }
func (s codecSnakeStage) history() int  { return 0 }
func (s codecSnakeStage) channels() int { return len(s.alpha) }

func (s codecSnakeStage) run(in codecSignal, outStart int, ws *CodecScratch) codecSignal {
	o0 := max(in.start, outStart)
	src := codecSignal{start: o0, n: in.end() - o0, ch: in.ch, data: in.data[(o0-in.start)*in.ch:]}
	out := ws.signal(o0, src.n, in.ch)
	s.apply(out, src)
	return out
}

// codecResidualUnit is x + conv1(snake(conv7_d(snake(x)))).
type codecResidualUnit struct {
	snake1, snake2 *codecSnake
	conv7, conv1   *codecConv
}

func (u *codecResidualUnit) label() string { return "decoder" }
func (u *codecResidualUnit) up() int       { return 1 }
func (u *codecResidualUnit) history() int  { return u.conv7.history() }
func (u *codecResidualUnit) channels() int { return u.conv1.out }

func (u *codecResidualUnit) run(in codecSignal, outStart int, ws *CodecScratch) codecSignal {
	o0 := max(in.start, outStart)
	a0 := max(in.start, o0-u.conv7.history())
	src := codecSignal{start: a0, n: in.end() - a0, ch: in.ch, data: in.data[(a0-in.start)*in.ch:]}
	a := ws.signal(a0, src.n, in.ch)
	u.snake1.apply(a, src)
	y := ws.signal(o0, in.end()-o0, u.conv7.out)
	u.conv7.apply(y, a)
	ws.release(a)
	u.snake2.apply(y, y)
	out := ws.signal(o0, y.n, u.conv1.out)
	u.conv1.apply(out, y)
	ws.release(y)
	for t := o0; t < in.end(); t++ {
		r, x := out.row(t), in.row(t)
		for i := range r {
			r[i] = x[i] + r[i]
		}
	}
	return out
}

func (c *Codec) loadDecoder(l *codecLoader, g *CodecGeometry) []codecStage {
	in := c.stages[len(c.stages)-1].channels()
	snake, conv, vShape := l.snake, l.wnConv, l.wnShape

	var stages []codecStage
	sh := vShape("decoder.model.0")
	if len(sh) != 3 || sh[1] != in {
		l.fail("codec: decoder.model.0 weight has shape %v, want [dim, %d, kernel]", sh, in)
		return nil
	}
	g.DecoderDim = sh[0]
	first := conv("decoder.model.0", sh[0], in, sh[2], 1)
	if first == nil {
		return nil
	}
	stages = append(stages, &codecConvStage{conv: first})
	ch := sh[0]
	i := 1
	for ; l.has(fmt.Sprintf("decoder.model.%d.block.0.alpha", i)); i++ {
		p := fmt.Sprintf("decoder.model.%d.block", i)
		tsh := vShape(p + ".1")
		if len(tsh) != 3 || tsh[0] != ch || tsh[2]%2 != 0 {
			l.fail("codec: %s.1 transposed-conv weight has shape %v, want [%d, out, 2·stride]", p, tsh, ch)
			return nil
		}
		out, k := tsh[1], tsh[2]
		stride := k / 2
		sn := snake(p+".0", ch)
		w := l.weightNormed(p+".1.conv", ch, out, k)
		b := l.f32(p+".1.conv.bias", out)
		if sn == nil || w == nil || b == nil {
			return nil
		}
		stages = append(stages, codecSnakeStage{sn},
			&codecTransConvStage{conv: newCodecTransConv(w, b, ch, out, k, stride), stride: stride, out: out, stage: "decoder"})
		for j, dil := range codecDilations {
			rp := fmt.Sprintf("%s.%d.block", p, 2+j)
			ksh := vShape(rp + ".1")
			if len(ksh) != 3 || ksh[0] != out || ksh[1] != out {
				l.fail("codec: %s.1 weight has shape %v, want [%d, %d, kernel]", rp, ksh, out, out)
				return nil
			}
			u := l.residualUnit(rp, out, ksh[2], dil)
			if u == nil {
				return nil
			}
			stages = append(stages, u)
		}
		g.DecoderStrides = append(g.DecoderStrides, stride)
		ch = out
	}
	if len(g.DecoderStrides) == 0 {
		l.fail("codec: missing tensor decoder.model.1.block.0.alpha")
		return nil
	}
	sn := snake(fmt.Sprintf("decoder.model.%d", i), ch)
	fsh := vShape(fmt.Sprintf("decoder.model.%d", i+1))
	if len(fsh) != 3 || fsh[0] != 1 || fsh[1] != ch {
		l.fail("codec: decoder.model.%d weight has shape %v, want [1, %d, kernel]", i+1, fsh, ch)
		return nil
	}
	last := conv(fmt.Sprintf("decoder.model.%d", i+1), 1, ch, fsh[2], 1)
	if sn == nil || last == nil {
		return nil
	}
	return append(stages, codecSnakeStage{sn}, &codecConvStage{conv: last, tanh: true})
}

// residualUnit reads the residual unit at prefix rp (its .block.N modules):
// ch channels, a dilated conv of the given kernel and dilation.
func (l *codecLoader) residualUnit(rp string, ch, kernel, dil int) *codecResidualUnit {
	u := &codecResidualUnit{
		snake1: l.snake(rp+".0", ch),
		conv7:  l.wnConv(rp+".1", ch, ch, kernel, dil),
		snake2: l.snake(rp+".2", ch),
		conv1:  l.wnConv(rp+".3", ch, ch, 1, 1),
	}
	if u.snake1 == nil || u.conv7 == nil || u.snake2 == nil || u.conv1 == nil {
		return nil
	}
	return u
}

// snake reads a Snake1d's alpha [1, ch, 1].
func (l *codecLoader) snake(name string, ch int) *codecSnake {
	a := l.f32(name+".alpha", 1, ch, 1)
	if a == nil {
		return nil
	}
	return newCodecSnake(a)
}

// wnConv reads the weight-normed causal conv at name (a CausalConvNet: its
// .conv holds the weight and bias), out × in × k at dilation dil.
func (l *codecLoader) wnConv(name string, out, in, k, dil int) *codecConv {
	w := l.weightNormed(name+".conv", out, in, k)
	b := l.f32(name+".conv.bias", out)
	if w == nil || b == nil {
		return nil
	}
	return newCodecConv(w, b, out, in, k, dil)
}

// wnShape is the shape of the weight-norm direction of the conv at name
// (a CausalConvNet, whose .conv holds the weight), in either spelling.
func (l *codecLoader) wnShape(name string) []int { return l.wnShapeAt(name + ".conv") }

// wnShapeAt is the shape of the weight-norm direction of the module at name
// in either spelling (nil and an error if it is missing).
func (l *codecLoader) wnShapeAt(name string) []int {
	for _, suffix := range []string{".parametrizations.weight.original1", ".weight_v"} {
		if l.has(name + suffix) {
			return l.shape(name + suffix)
		}
	}
	l.fail("codec: missing tensor %s%s.parametrizations.weight.original1", l.prefix, name)
	return nil
}

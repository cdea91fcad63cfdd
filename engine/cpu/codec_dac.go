package cpu

import (
	"math"

	"proscenium/engine/drama3"
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

func newCodecDecoder(d *drama3.CodecDecoder) []codecStage {
	conv := func(c drama3.CodecConv) *codecConv {
		return newCodecConv(c.W, c.Bias, c.Out, c.In, c.Kernel, c.Dilation)
	}
	stages := []codecStage{&codecConvStage{conv: conv(d.First)}}
	for i := range d.Blocks {
		b := &d.Blocks[i]
		up := b.Up
		stages = append(stages, codecSnakeStage{newCodecSnake(b.Alpha)},
			&codecTransConvStage{conv: newCodecTransConv(up.W, up.Bias, up.In, up.Out, up.Kernel, up.Stride), stride: up.Stride, out: up.Out, stage: "decoder"})
		for j := range b.Units {
			stages = append(stages, newCodecResidualUnit(&b.Units[j]))
		}
	}
	return append(stages, codecSnakeStage{newCodecSnake(d.FinalAlpha)}, &codecConvStage{conv: conv(d.Last), tanh: true})
}

// newCodecResidualUnit builds a residual unit (the decoder's and the
// encoder's).
func newCodecResidualUnit(u *drama3.CodecResidualUnit) *codecResidualUnit {
	conv := func(c drama3.CodecConv) *codecConv {
		return newCodecConv(c.W, c.Bias, c.Out, c.In, c.Kernel, c.Dilation)
	}
	return &codecResidualUnit{snake1: newCodecSnake(u.Alpha1), conv7: conv(u.Conv7), snake2: newCodecSnake(u.Alpha2), conv1: conv(u.Conv1)}
}

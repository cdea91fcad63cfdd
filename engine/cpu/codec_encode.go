package cpu

import (
	"fmt"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// The codec encoder (SGLang-Omni's modded_dac.DAC.encode; MODEL.md §5
// "Encode"): 44.1 kHz audio, padded on the right to whole frames →
// encoder.block (a causal conv, four blocks of three residual units, Snake
// and a strided conv, each optionally followed by a window-limited
// transformer, then Snake and a conv to the latent) → quantizer.downsample
// (two causal stride-2 convs, each with a ConvNeXt block) →
// quantizer.pre_module (window-limited transformer) → the semantic quantizer
// and the nine residual quantizers (codec_quantize.go) → codes [10, T].
// It shares the decoder's convolutions, residual units, ConvNeXt blocks and
// transformer; it runs over the whole reference at once (references are
// short), so its signals are windows starting at time 0.

// CodecEncoder is a loaded codec encoder. It is immutable: Encode may run
// concurrently.
type CodecEncoder struct {
	geom     drama3.CodecEncoderGeometry
	encoder  []codecEncodeStep // audio → z_enc
	reduce   []codecEncodeStep // z_enc → z_pre (downsample, pre-module)
	semantic codecQuantizer
	residual []codecQuantizer
}

// codecEncodeStep is one step of the encode pipeline over a whole signal
// (a window starting at time 0). It does not release in.
type codecEncodeStep func(in codecSignal, ws *CodecScratch) codecSignal

// wholeStage runs a decoder-side stage over a whole signal.
func wholeStage(st codecStage) codecEncodeStep {
	return func(in codecSignal, ws *CodecScratch) codecSignal { return st.run(in, 0, ws) }
}

// stridedConvStep is a causal conv of kernel taps·stride and that stride
// (CausalConvNet with left padding kernel − stride): viewing the time-major
// input as blocks of stride samples ([t/stride][stride·in]), output j reads
// blocks j−taps+1 … j, a stride-1 causal conv of kernel taps over the
// blocks. The input length must be a multiple of stride (Encode pads to
// whole frames, and every stride divides a frame), so the reference's extra
// right padding is zero.
func stridedConvStep(c *codecConv, stride int) codecEncodeStep {
	return func(in codecSignal, ws *CodecScratch) codecSignal {
		blocks := codecSignal{start: in.start / stride, n: in.n / stride, ch: in.ch * stride, data: in.data[:in.n*in.ch]}
		out := ws.signal(blocks.start, blocks.n, c.out)
		c.apply(out, blocks)
		return out
	}
}

// newCodecStridedConv is a strided conv in the blocked form of
// stridedConvStep (drama3.PackCodecStridedConv).
func newCodecStridedConv(c drama3.CodecConv) *codecConv {
	return codecConvOf(drama3.PackCodecStridedConv(c))
}

// LoadCodecEncoderFile reads the encoder from a codec.pth.
func LoadCodecEncoderFile(path string, opt drama3.CodecOptions) (*CodecEncoder, error) {
	w, err := drama3.ReadCodecEncoderFile(path, opt)
	if err != nil {
		return nil, err
	}
	return NewCodecEncoder(w), nil
}

// LoadCodecEncoder builds the encoder from a codec state dict
// (drama3.ReadCodecEncoder).
func LoadCodecEncoder(ts *checkpoint.TensorSet, opt drama3.CodecOptions) (*CodecEncoder, error) {
	w, err := drama3.ReadCodecEncoder(ts, opt)
	if err != nil {
		return nil, err
	}
	return NewCodecEncoder(w), nil
}

// NewCodecEncoder builds the encoder's stages from its weights.
func NewCodecEncoder(w *drama3.CodecEncoderWeights) *CodecEncoder {
	g := w.Geometry
	e := &CodecEncoder{geom: g}
	conv := func(c drama3.CodecConv) *codecConv {
		return newCodecConv(c.W, c.Bias, c.Out, c.In, c.Kernel, c.Dilation)
	}
	e.encoder = append(e.encoder, wholeStage(&codecConvStage{conv: conv(w.First)}))
	for i := range w.Blocks {
		b := &w.Blocks[i]
		for j := range b.Units {
			e.encoder = append(e.encoder, wholeStage(newCodecResidualUnit(&b.Units[j])))
		}
		e.encoder = append(e.encoder, wholeStage(codecSnakeStage{newCodecSnake(b.Alpha)}), stridedConvStep(newCodecStridedConv(b.Down), b.Down.Stride))
		if t := b.Transformer; t != nil {
			for _, st := range newCodecTransformer(&t.CodecPost, t.Dim, t.FFN, drama3.CodecEncoderWindow, g.RopeBase) {
				e.encoder = append(e.encoder, wholeStage(st))
			}
		}
	}
	e.encoder = append(e.encoder, wholeStage(codecSnakeStage{newCodecSnake(w.FinalAlpha)}), wholeStage(&codecConvStage{conv: conv(w.Last)}))
	for i := range w.Downsample {
		d := &w.Downsample[i]
		e.reduce = append(e.reduce, stridedConvStep(newCodecStridedConv(d.Down), d.Down.Stride),
			wholeStage(newCodecConvNeXt(d.Down.Out, d.DW, d.NormW, d.NormB, d.PW1, d.PW2, d.Gamma)))
	}
	for _, st := range newCodecTransformer(&w.Pre.CodecPost, w.Pre.Dim, w.Pre.FFN, g.Window, g.RopeBase) {
		e.reduce = append(e.reduce, wholeStage(st))
	}
	e.semantic = newCodecQuantizer(&w.Semantic)
	e.semantic.setEncode(w.SemanticIn)
	for i := range w.Residual {
		q := newCodecQuantizer(&w.Residual[i])
		q.setEncode(w.ResidualIn[i])
		e.residual = append(e.residual, q)
	}
	return e
}

// Geometry returns the encoder's shape.
func (e *CodecEncoder) Geometry() drama3.CodecEncoderGeometry {
	g := e.geom
	g.EncoderStrides = append([]int(nil), g.EncoderStrides...)
	g.EncoderLayers = append([]int(nil), g.EncoderLayers...)
	g.DownsampleStrides = append([]int(nil), g.DownsampleStrides...)
	return g
}

// Encode encodes mono 44.1 kHz audio in [−1, 1] (the reference does not
// clip; larger values are encoded as they are). The audio is padded with
// zeros on the right to whole frames. Empty or non-finite audio is an error.
func (e *CodecEncoder) Encode(audio []float32) (*drama3.CodecEncoding, error) {
	spf := e.geom.SamplesPerFrame
	frames, err := drama3.CodecEncodeFrames(audio, spf)
	if err != nil {
		return nil, err
	}
	ws := &CodecScratch{}
	x := ws.signal(0, frames*spf, 1)
	copy(x.data, audio)
	clear(x.data[len(audio):])
	for _, step := range e.encoder {
		y := step(x, ws)
		ws.release(x)
		x = y
	}
	res := &drama3.CodecEncoding{Frames: frames, ZEnc: x.channelMajor()}
	for _, step := range e.reduce {
		y := step(x, ws)
		ws.release(x)
		x = y
	}
	if x.n != frames {
		return nil, fmt.Errorf("codec: the encoder made %d frames from %d samples, want %d", x.n, frames*spf, frames)
	}
	res.ZPre = x.channelMajor()
	res.Codes, res.Margins = e.quantize(x)
	ws.release(x)
	return res, nil
}

// CodecCodesMatch applies the encode check of the goldens to codes got
// against the reference's want (both frame-major, nb codes a frame, with the
// reference's margins): a frame matches when every code is equal; a frame
// that differs is excused when the reference's margin at its first differing
// codebook is below tieMargin (a near-tie that float32 reordering may flip;
// the later codebooks of that frame then follow another residual). It
// returns the count of matching frames and an error naming the first frame
// that differs without excuse.
func CodecCodesMatch(got, want []int32, margins []float32, nb int, tieMargin float32) (int, error) {
	if len(got) != len(want) || len(margins) != len(want) || nb < 1 || len(want)%nb != 0 {
		return 0, fmt.Errorf("codes: %d codes against %d reference codes and %d margins (%d a frame)", len(got), len(want), len(margins), nb)
	}
	same := 0
	for f := 0; f < len(want)/nb; f++ {
		i := 0
		for i < nb && got[f*nb+i] == want[f*nb+i] {
			i++
		}
		if i == nb {
			same++
			continue
		}
		if m := margins[f*nb+i]; !(m < tieMargin) {
			return same, fmt.Errorf("codes: frame %d codebook %d is %d, the reference picked %d with margin %g (not a near-tie)", f, i, got[f*nb+i], want[f*nb+i], m)
		}
	}
	return same, nil
}

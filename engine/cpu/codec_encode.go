package cpu

import (
	"fmt"
	"math"
	"strings"

	"proscenium/engine/checkpoint"
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

// CodecEncoderWindow is the attention window of the encoder blocks'
// transformers: EncoderBlock passes window_size=512 (rows at that block's
// rate). The pre-module uses the codec's window (CodecOptions.Window).
const CodecEncoderWindow = 512

// CodecEncoderGeometry is the shape of a loaded encoder.
type CodecEncoderGeometry struct {
	EncoderDim        int   // width of the first conv (64 in S2)
	EncoderStrides    []int // encoder block strides ([2 4 8 8])
	EncoderLayers     []int // transformer layers after each block
	Latent            int   // encoder output width (1024 in S2)
	DownsampleStrides []int // quantizer.downsample stages ([2 2])
	PreLayers         int   // quantizer.pre_module layers
	Window            int   // pre-module attention window, frames
	SamplesPerFrame   int   // product of every stride (2048)
	Codebooks         int   // codes per frame (10)
}

// CodecEncoder is a loaded codec encoder. It is immutable: Encode may run
// concurrently.
type CodecEncoder struct {
	geom     CodecEncoderGeometry
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

// newCodecStridedConv repacks a PyTorch Conv1d weight [out][in][taps·stride]
// (weight norm folded) into the blocked stride-1 conv of stridedConvStep:
// weight [out][tap][phase·in + c] = w[out][c][tap·stride + phase].
func newCodecStridedConv(w, bias []float32, out, in, kernel, stride int) *codecConv {
	taps := kernel / stride
	c := &codecConv{in: stride * in, out: out, kernel: taps, dilation: 1, w: make([]float32, len(w)), bias: bias}
	for o := 0; o < out; o++ {
		for k := 0; k < taps; k++ {
			for p := 0; p < stride; p++ {
				for ci := 0; ci < in; ci++ {
					c.w[(o*taps+k)*c.in+p*in+ci] = w[(o*in+ci)*kernel+k*stride+p]
				}
			}
		}
	}
	return c
}

// LoadCodecEncoderFile reads the encoder from a codec.pth.
func LoadCodecEncoderFile(path string, opt CodecOptions) (*CodecEncoder, error) {
	ts, err := checkpoint.ReadTorchFile(path)
	if err != nil {
		return nil, err
	}
	return LoadCodecEncoder(ts, opt)
}

// LoadCodecEncoder builds the encoder from a codec state dict (which must
// hold the encoder: some exported codecs keep only the decoder). Encode-path
// tensors it does not know are an error naming them.
func LoadCodecEncoder(ts *checkpoint.TensorSet, opt CodecOptions) (*CodecEncoder, error) {
	g := CodecEncoderGeometry{Window: CodecDefaultWindow}
	ropeBase := CodecDefaultRopeBase
	if opt.Window < 0 || opt.Window > codecMaxFrames || opt.RopeBase < 0 {
		return nil, fmt.Errorf("codec: window %d must be in 1..%d and rope base %g positive", opt.Window, codecMaxFrames, opt.RopeBase)
	}
	if opt.Window > 0 {
		g.Window = opt.Window
	}
	if opt.RopeBase > 0 {
		ropeBase = opt.RopeBase
	}
	l, err := newCodecLoader(ts)
	if err != nil {
		return nil, err
	}
	if !l.has("encoder.block.0.conv.bias") {
		return nil, fmt.Errorf("codec: no encoder in this codec (missing tensor %sencoder.block.0.conv.bias): it can decode but not encode references", l.prefix)
	}
	e := &CodecEncoder{}
	e.loadEncoder(l, &g, ropeBase)
	if l.err != nil {
		return nil, l.err
	}
	e.loadReduce(l, &g, ropeBase)
	if l.err != nil {
		return nil, l.err
	}
	e.loadQuantizers(l, &g)
	if l.err != nil {
		return nil, l.err
	}
	if extra := l.unusedUnder("encoder.", "quantizer.downsample.", "quantizer.pre_module."); len(extra) > 0 {
		more := ""
		if len(extra) > 5 {
			more = fmt.Sprintf(" and %d more", len(extra)-5)
			extra = extra[:5]
		}
		return nil, fmt.Errorf("codec: encoder tensors this encoder does not know: %s%s", strings.Join(extra, ", "), more)
	}
	g.SamplesPerFrame = 1
	for _, s := range append(append([]int(nil), g.EncoderStrides...), g.DownsampleStrides...) {
		g.SamplesPerFrame *= s
	}
	e.geom = g
	return e, nil
}

// Geometry returns the encoder's shape.
func (e *CodecEncoder) Geometry() CodecEncoderGeometry {
	g := e.geom
	g.EncoderStrides = append([]int(nil), g.EncoderStrides...)
	g.EncoderLayers = append([]int(nil), g.EncoderLayers...)
	g.DownsampleStrides = append([]int(nil), g.DownsampleStrides...)
	return g
}

// loadEncoder reads encoder.block: 0 the first conv, 1..n the encoder
// blocks, then Snake and the last conv.
func (e *CodecEncoder) loadEncoder(l *codecLoader, g *CodecEncoderGeometry, ropeBase float64) {
	sh := l.wnShape("encoder.block.0")
	if len(sh) != 3 || sh[1] != 1 {
		l.fail("codec: encoder.block.0 weight has shape %v, want [dim, 1, kernel]", sh)
		return
	}
	first := l.wnConv("encoder.block.0", sh[0], 1, sh[2], 1)
	if first == nil {
		return
	}
	g.EncoderDim = sh[0]
	e.encoder = append(e.encoder, wholeStage(&codecConvStage{conv: first}))
	ch := sh[0]
	i := 1
	for ; l.has(fmt.Sprintf("encoder.block.%d.block.0.block.0.alpha", i)); i++ {
		p := fmt.Sprintf("encoder.block.%d.block", i)
		for j, dil := range codecDilations {
			rp := fmt.Sprintf("%s.%d.block", p, j)
			ksh := l.wnShape(rp + ".1")
			if len(ksh) != 3 || ksh[0] != ch || ksh[1] != ch {
				l.fail("codec: %s.1 weight has shape %v, want [%d, %d, kernel]", rp, ksh, ch, ch)
				return
			}
			u := l.residualUnit(rp, ch, ksh[2], dil)
			if u == nil {
				return
			}
			e.encoder = append(e.encoder, wholeStage(u))
		}
		sn := l.snake(p+".3", ch)
		csh := l.wnShape(p + ".4")
		if len(csh) != 3 || csh[1] != ch || csh[2]%2 != 0 {
			l.fail("codec: %s.4 weight has shape %v, want [out, %d, 2·stride]", p, csh, ch)
			return
		}
		out, k := csh[0], csh[2]
		stride := k / 2
		w := l.weightNormed(p+".4.conv", out, ch, k)
		b := l.f32(p+".4.conv.bias", out)
		if sn == nil || w == nil || b == nil {
			return
		}
		e.encoder = append(e.encoder, wholeStage(codecSnakeStage{sn}), stridedConvStep(newCodecStridedConv(w, b, out, ch, k, stride), stride))
		ch = out
		t := loadCodecTransformer(l, p+".5", ch, CodecEncoderWindow, ropeBase)
		for _, st := range t.stages {
			e.encoder = append(e.encoder, wholeStage(st))
		}
		if l.err != nil {
			return
		}
		g.EncoderStrides = append(g.EncoderStrides, stride)
		g.EncoderLayers = append(g.EncoderLayers, t.layers)
	}
	if len(g.EncoderStrides) == 0 {
		l.fail("codec: missing tensor %sencoder.block.1.block.0.block.0.alpha", l.prefix)
		return
	}
	sn := l.snake(fmt.Sprintf("encoder.block.%d", i), ch)
	lsh := l.wnShape(fmt.Sprintf("encoder.block.%d", i+1))
	if len(lsh) != 3 || lsh[1] != ch {
		l.fail("codec: encoder.block.%d weight has shape %v, want [latent, %d, kernel]", i+1, lsh, ch)
		return
	}
	last := l.wnConv(fmt.Sprintf("encoder.block.%d", i+1), lsh[0], ch, lsh[2], 1)
	if sn == nil || last == nil {
		return
	}
	g.Latent = lsh[0]
	e.encoder = append(e.encoder, wholeStage(codecSnakeStage{sn}), wholeStage(&codecConvStage{conv: last}))
}

// loadReduce reads quantizer.downsample (each stage a plain causal conv of
// kernel = stride = factor with bias, then a ConvNeXt block) and
// quantizer.pre_module.
func (e *CodecEncoder) loadReduce(l *codecLoader, g *CodecEncoderGeometry, ropeBase float64) {
	ch := g.Latent
	for i := 0; l.has(fmt.Sprintf("quantizer.downsample.%d.0.conv.weight", i)); i++ {
		p := fmt.Sprintf("quantizer.downsample.%d", i)
		sh := l.shape(p + ".0.conv.weight")
		if len(sh) != 3 || sh[1] != ch || sh[2] < 1 {
			l.fail("codec: tensor %s.0.conv.weight has shape %v, want [out, %d, kernel]", p, sh, ch)
			return
		}
		out, k := sh[0], sh[2]
		w := l.f32(p+".0.conv.weight", out, ch, k)
		b := l.f32(p+".0.conv.bias", out)
		nx := l.convNeXt(p+".1", out)
		if l.err != nil {
			return
		}
		e.reduce = append(e.reduce, stridedConvStep(newCodecStridedConv(w, b, out, ch, k, k), k), wholeStage(nx))
		g.DownsampleStrides = append(g.DownsampleStrides, k)
		ch = out
	}
	if ch != g.Latent {
		l.fail("codec: quantizer.downsample ends at width %d, the quantizers take %d", ch, g.Latent)
		return
	}
	t := loadCodecTransformer(l, "quantizer.pre_module", ch, g.Window, ropeBase)
	for _, st := range t.stages {
		e.reduce = append(e.reduce, wholeStage(st))
	}
	g.PreLayers = t.layers
}

// CodecEncoding is the result of an encode.
type CodecEncoding struct {
	Frames int
	// Codes are frame-major, as Decode takes them: code i of frame f at
	// Codes[f·Codebooks+i].
	Codes []int32
	// Margins are frame-major like Codes: each pick's best minus
	// second-best cosine similarity (a pick with a tiny margin may flip
	// under float32 reordering).
	Margins []float32
	// ZEnc [Latent][frames·downsampling] and ZPre [Latent][Frames] are the
	// encoder and pre-module outputs, channel-major as the reference lays
	// them out.
	ZEnc, ZPre []float32
}

// CodecMaxEncodeFrames bounds one encode: the pre-module's RoPE table.
const CodecMaxEncodeFrames = codecMaxFrames

// Encode encodes mono 44.1 kHz audio in [−1, 1] (the reference does not
// clip; larger values are encoded as they are). The audio is padded with
// zeros on the right to whole frames. Empty or non-finite audio is an error.
func (e *CodecEncoder) Encode(audio []float32) (*CodecEncoding, error) {
	if len(audio) == 0 {
		return nil, fmt.Errorf("codec: no audio to encode")
	}
	for i, v := range audio {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("codec: audio sample %d is not finite", i)
		}
	}
	spf := e.geom.SamplesPerFrame
	frames := (len(audio) + spf - 1) / spf
	if frames > CodecMaxEncodeFrames {
		return nil, fmt.Errorf("codec: %d frames of audio is past the reference's RoPE table of %d frames", frames, CodecMaxEncodeFrames)
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
	res := &CodecEncoding{Frames: frames, ZEnc: x.channelMajor()}
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

package drama3

import (
	"fmt"
	"strings"

	"proscenium/engine/checkpoint"
)

// The codec encoder's side of codec.pth (MODEL.md §5 "Encode"; SGLang-Omni's
// modded_dac.DAC.encode): which tensor is which encoder weight and the
// geometry their shapes give. Backends build their encoders from
// CodecEncoderWeights (engine/cpu: codec_encode.go).

// CodecEncoderWindow is the attention window of the encoder blocks'
// transformers (EncoderBlock passes window_size=512, rows at that block's
// rate). The pre-module uses the codec's window (CodecOptions.Window).
const CodecEncoderWindow = 512

// CodecEncoderGeometry is the shape of a codec's encoder.
type CodecEncoderGeometry struct {
	EncoderDim        int   // width of the first conv (64 in S2)
	EncoderStrides    []int // encoder block strides ([2 4 8 8])
	EncoderLayers     []int // transformer layers after each block
	Latent            int   // encoder output width (1024 in S2)
	DownsampleStrides []int // quantizer.downsample stages ([2 2])
	PreLayers         int   // quantizer.pre_module layers
	Window            int   // pre-module attention window, frames
	RopeBase          float64
	SamplesPerFrame   int // product of every stride (2048)
	Codebooks         int // codes per frame (10)
}

// CodecTransformer is a window-limited transformer of the encoder side
// (an encoder block's, the pre-module) with its width.
type CodecTransformer struct {
	CodecPost
	Dim, FFN int
}

// CodecEncoderBlock is three residual units, Snake and a strided conv
// (kernel 2·stride), then optionally a transformer.
type CodecEncoderBlock struct {
	Units       [3]CodecResidualUnit
	Alpha       []float32
	Down        CodecConv // Conv1d with Stride set
	Transformer *CodecTransformer
}

// CodecDownsample is one quantizer.downsample stage: a causal conv (kernel =
// stride, bias, no weight norm) and a ConvNeXt block.
type CodecDownsample struct {
	Down         CodecConv // Conv1d with Stride set
	DW           CodecConv
	NormW, NormB []float32
	PW1, PW2     CodecConv
	Gamma        []float32
}

// CodecEncoderWeights is a codec encoder's every weight in float32.
type CodecEncoderWeights struct {
	Geometry   CodecEncoderGeometry
	First      CodecConv
	Blocks     []CodecEncoderBlock
	FinalAlpha []float32
	Last       CodecConv
	Downsample []CodecDownsample
	Pre        CodecTransformer
	// The quantizers (codebook, out_proj) and their in_proj (latent → dim).
	Semantic   CodecQuantizer
	Residual   []CodecQuantizer
	SemanticIn CodecConv
	ResidualIn []CodecConv
}

// ReadCodecEncoderFile reads the encoder of a codec.pth.
func ReadCodecEncoderFile(path string, opt CodecOptions) (*CodecEncoderWeights, error) {
	ts, err := checkpoint.ReadTorchFile(path)
	if err != nil {
		return nil, err
	}
	return ReadCodecEncoder(ts, opt)
}

// ReadCodecEncoder binds the encoder tensors of a codec state dict. A codec
// without them (a decoder-only export) is an error saying so; encode-path
// tensors it does not know are an error naming them.
func ReadCodecEncoder(ts *checkpoint.TensorSet, opt CodecOptions) (*CodecEncoderWeights, error) {
	g := CodecEncoderGeometry{}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	g.Window, g.RopeBase = opt.Window, opt.RopeBase
	l, err := newCodecLoader(ts)
	if err != nil {
		return nil, err
	}
	if !l.has("encoder.block.0.conv.bias") {
		return nil, fmt.Errorf("codec: no encoder in this codec (missing tensor %sencoder.block.0.conv.bias): it can decode but not encode references", l.prefix)
	}
	w := &CodecEncoderWeights{}
	for _, step := range []func(*codecLoader, *CodecEncoderGeometry){w.readEncoder, w.readReduce, w.readQuantizers} {
		step(l, &g)
		if l.err != nil {
			return nil, l.err
		}
	}
	var extra []string
	for _, full := range ts.Names() {
		n, ok := strings.CutPrefix(full, l.prefix)
		if ok && !l.used[full] && (strings.HasPrefix(n, "encoder.") || strings.HasPrefix(n, "quantizer.downsample.") || strings.HasPrefix(n, "quantizer.pre_module.")) {
			extra = append(extra, full)
		}
	}
	if len(extra) > 0 {
		return nil, unknownTensors("codec: encoder tensors this encoder does not know", extra)
	}
	g.SamplesPerFrame = 1
	for _, s := range append(append([]int(nil), g.EncoderStrides...), g.DownsampleStrides...) {
		g.SamplesPerFrame *= s
	}
	w.Geometry = g
	return w, nil
}

// wnConv reads the weight-normed causal conv at name (its .conv module).
func (l *codecLoader) wnConv(name string, out, in, k, dil int) CodecConv {
	return CodecConv{W: l.weightNormed(name+".conv", out, in, k), Bias: l.f32(name+".conv.bias", out), Out: out, In: in, Kernel: k, Dilation: dil}
}

// wnShape is the shape of the weight-norm direction of the conv at name, in
// either spelling (nil and an error if it is missing).
func (l *codecLoader) wnShape(name string) []int {
	for _, suffix := range []string{".conv.parametrizations.weight.original1", ".conv.weight_v"} {
		if l.has(name + suffix) {
			return l.shape(name + suffix)
		}
	}
	l.fail("codec: missing tensor %s%s.conv.parametrizations.weight.original1", l.prefix, name)
	return nil
}

func (w *CodecEncoderWeights) readEncoder(l *codecLoader, g *CodecEncoderGeometry) {
	sh := l.wnShape("encoder.block.0")
	if len(sh) != 3 || sh[1] != 1 {
		l.fail("codec: encoder.block.0 weight has shape %v, want [dim, 1, kernel]", sh)
		return
	}
	w.First = l.wnConv("encoder.block.0", sh[0], 1, sh[2], 1)
	g.EncoderDim = sh[0]
	ch := sh[0]
	i := 1
	for ; l.has(fmt.Sprintf("encoder.block.%d.block.0.block.0.alpha", i)); i++ {
		p := fmt.Sprintf("encoder.block.%d.block", i)
		var b CodecEncoderBlock
		for j, dil := range CodecDilations {
			rp := fmt.Sprintf("%s.%d.block", p, j)
			ksh := l.wnShape(rp + ".1")
			if len(ksh) != 3 || ksh[0] != ch || ksh[1] != ch {
				l.fail("codec: %s.1 weight has shape %v, want [%d, %d, kernel]", rp, ksh, ch, ch)
				return
			}
			b.Units[j] = CodecResidualUnit{Alpha1: l.f32(rp+".0.alpha", 1, ch, 1), Conv7: l.wnConv(rp+".1", ch, ch, ksh[2], dil),
				Alpha2: l.f32(rp+".2.alpha", 1, ch, 1), Conv1: l.wnConv(rp+".3", ch, ch, 1, 1)}
		}
		b.Alpha = l.f32(p+".3.alpha", 1, ch, 1)
		csh := l.wnShape(p + ".4")
		if len(csh) != 3 || csh[1] != ch || csh[2]%2 != 0 {
			l.fail("codec: %s.4 weight has shape %v, want [out, %d, 2·stride]", p, csh, ch)
			return
		}
		b.Down = l.wnConv(p+".4", csh[0], ch, csh[2], 1)
		b.Down.Stride = csh[2] / 2
		ch = csh[0]
		if t, ok := readCodecTransformer(l, p+".5", ch); ok {
			b.Transformer = &t
		}
		if l.err != nil {
			return
		}
		layers := 0
		if b.Transformer != nil {
			layers = len(b.Transformer.Layers)
		}
		w.Blocks = append(w.Blocks, b)
		g.EncoderStrides = append(g.EncoderStrides, b.Down.Stride)
		g.EncoderLayers = append(g.EncoderLayers, layers)
	}
	if len(w.Blocks) == 0 {
		l.fail("codec: missing tensor %sencoder.block.1.block.0.block.0.alpha", l.prefix)
		return
	}
	w.FinalAlpha = l.f32(fmt.Sprintf("encoder.block.%d.alpha", i), 1, ch, 1)
	lsh := l.wnShape(fmt.Sprintf("encoder.block.%d", i+1))
	if len(lsh) != 3 || lsh[1] != ch {
		l.fail("codec: encoder.block.%d weight has shape %v, want [latent, %d, kernel]", i+1, lsh, ch)
		return
	}
	w.Last = l.wnConv(fmt.Sprintf("encoder.block.%d", i+1), lsh[0], ch, lsh[2], 1)
	g.Latent = lsh[0]
}

// readReduce reads quantizer.downsample and quantizer.pre_module.
func (w *CodecEncoderWeights) readReduce(l *codecLoader, g *CodecEncoderGeometry) {
	ch := g.Latent
	for i := 0; l.has(fmt.Sprintf("quantizer.downsample.%d.0.conv.weight", i)); i++ {
		p := fmt.Sprintf("quantizer.downsample.%d", i)
		sh := l.shape(p + ".0.conv.weight")
		if len(sh) != 3 || sh[1] != ch || sh[2] < 1 {
			l.fail("codec: tensor %s.0.conv.weight has shape %v, want [out, %d, kernel]", p, sh, ch)
			return
		}
		out, k := sh[0], sh[2]
		d := CodecDownsample{Down: CodecConv{W: l.f32(p+".0.conv.weight", out, ch, k), Bias: l.f32(p+".0.conv.bias", out), Out: out, In: ch, Kernel: k, Dilation: 1, Stride: k}}
		b, ok := l.convNeXt(p+".1", out)
		if !ok {
			return
		}
		d.DW, d.NormW, d.NormB, d.PW1, d.PW2, d.Gamma = b.DW, b.NormW, b.NormB, b.PW1, b.PW2, b.Gamma
		w.Downsample = append(w.Downsample, d)
		g.DownsampleStrides = append(g.DownsampleStrides, k)
		ch = out
	}
	if ch != g.Latent {
		l.fail("codec: quantizer.downsample ends at width %d, the quantizers take %d", ch, g.Latent)
		return
	}
	if t, ok := readCodecTransformer(l, "quantizer.pre_module", ch); ok {
		w.Pre = t
		g.PreLayers = len(t.Layers)
	} else if l.err == nil {
		l.fail("codec: missing tensor %squantizer.pre_module.layers.0.attention.wqkv.weight", l.prefix)
	}
}

// readCodecTransformer reads the window-limited transformer under prefix p
// that maps inDim-wide rows to inDim-wide rows; ok is false when it has no
// layers (absent).
func readCodecTransformer(l *codecLoader, p string, inDim int) (CodecTransformer, bool) {
	var t CodecTransformer
	if !l.has(p + ".layers.0.attention.wqkv.weight") {
		return t, false
	}
	dim := inDim
	if l.has(p + ".input_proj.weight") {
		sh := l.shape(p + ".input_proj.weight")
		if len(sh) != 2 || sh[1] != inDim {
			l.fail("codec: tensor %s.input_proj.weight has shape %v, want [dim %d]", p, sh, inDim)
			return t, false
		}
		dim = sh[0]
		t.InputProj = &CodecConv{W: l.f32(p+".input_proj.weight", dim, inDim), Bias: l.f32(p+".input_proj.bias", dim), Out: dim, In: inDim, Kernel: 1, Dilation: 1}
	}
	if dim%CodecHeadDim != 0 {
		l.fail("codec: %s width %d is not a multiple of the head width %d", p, dim, CodecHeadDim)
		return t, false
	}
	for i := 0; l.has(fmt.Sprintf("%s.layers.%d.attention.wqkv.weight", p, i)); i++ {
		lp := fmt.Sprintf("%s.layers.%d", p, i)
		sh := l.shape(lp + ".feed_forward.w1.weight")
		if len(sh) != 2 || sh[1] != dim {
			l.fail("codec: tensor %s.feed_forward.w1.weight has shape %v, want [ffn %d]", lp, sh, dim)
			return t, false
		}
		ffn := sh[0]
		t.Layers = append(t.Layers, CodecPostLayer{
			AttentionNorm: l.f32(lp+".attention_norm.weight", dim),
			FFNNorm:       l.f32(lp+".ffn_norm.weight", dim),
			WQKV:          l.f32(lp+".attention.wqkv.weight", 3*dim, dim),
			WO:            l.f32(lp+".attention.wo.weight", dim, dim),
			W1:            l.f32(lp+".feed_forward.w1.weight", ffn, dim),
			W3:            l.f32(lp+".feed_forward.w3.weight", ffn, dim),
			W2:            l.f32(lp+".feed_forward.w2.weight", dim, ffn),
			GammaAttn:     l.f32(lp+".attention_layer_scale.gamma", dim),
			GammaFF:       l.f32(lp+".ffn_layer_scale.gamma", dim),
		})
		t.FFN = ffn
	}
	t.Norm = l.f32(p+".norm.weight", dim)
	if l.has(p + ".output_proj.weight") {
		t.OutputProj = &CodecConv{W: l.f32(p+".output_proj.weight", inDim, dim), Bias: l.f32(p+".output_proj.bias", inDim), Out: inDim, In: dim, Kernel: 1, Dilation: 1}
	} else if dim != inDim {
		l.fail("codec: missing tensor %s.output_proj.weight", p)
	}
	t.Dim = dim
	return t, true
}

// readQuantizers reads every quantizer's codebook, out_proj and in_proj.
func (w *CodecEncoderWeights) readQuantizers(l *codecLoader, g *CodecEncoderGeometry) {
	const sem = "quantizer.semantic_quantizer.quantizers.0"
	inProj := func(prefix string, dim int) CodecConv {
		return CodecConv{W: l.weightNormed(prefix+".in_proj", dim, g.Latent, 1), Bias: l.f32(prefix+".in_proj.bias", dim), Out: dim, In: g.Latent, Kernel: 1, Dilation: 1}
	}
	vName := sem + ".out_proj.weight_v"
	if !l.has(vName) {
		vName = sem + ".out_proj.parametrizations.weight.original1"
	}
	sh := l.shape(vName)
	if l.err != nil {
		return
	}
	if len(sh) != 3 || sh[0] != g.Latent || sh[2] != 1 {
		l.fail("codec: %s.out_proj weight has shape %v, want [%d, dim, 1]", sem, sh, g.Latent)
		return
	}
	dim := sh[1]
	w.Semantic.read(l, sem, g.Latent, dim)
	w.SemanticIn = inProj(sem, dim)
	for i := 0; l.err == nil && l.has(fmt.Sprintf("quantizer.quantizer.quantizers.%d.codebook.weight", i)); i++ {
		p := fmt.Sprintf("quantizer.quantizer.quantizers.%d", i)
		var q CodecQuantizer
		q.read(l, p, g.Latent, dim)
		w.Residual = append(w.Residual, q)
		w.ResidualIn = append(w.ResidualIn, inProj(p, dim))
	}
	if l.err == nil && len(w.Residual) == 0 {
		l.fail("codec: missing tensor quantizer.quantizer.quantizers.0.codebook.weight")
	}
	g.Codebooks = 1 + len(w.Residual)
}

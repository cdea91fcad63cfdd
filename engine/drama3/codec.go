package drama3

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"proscenium/engine/checkpoint"
)

// This file is the codec's side of the checkpoint (codec.pth, the S2 codec
// decoder; shared/design/MODEL.md §5): which state-dict tensor is which
// weight, the geometry their shapes give, the constants the weights do not
// record, and the weight-norm folding. CodecWeights is what every backend
// builds its decoder from; the arithmetic is the backend's.

// Constants of the reference codec that its state dict does not record.
const (
	CodecDefaultWindow   = 128     // post-module attention window, frames
	CodecDefaultRopeBase = 10000.0 // post-module RoPE base
	CodecHeadDim         = 64      // post-module heads = width / 64
	CodecNormEps         = 1e-5    // post-module RMSNorm
	CodecConvNeXtEps     = 1e-6    // ConvNeXt LayerNorm
	// CodecMaxFrames is the length of the reference's RoPE table
	// (precompute_freqs_cis(327680, …)): it cannot decode past it.
	CodecMaxFrames = 327680
)

// CodecDilations are the dilations of each decoder block's three residual
// units (ResidualUnit(dilation=1, 3, 9) in the reference; not in the weights).
var CodecDilations = [3]int{1, 3, 9}

// CodecAnchor is the key whose position fixes the prefix of a codec state
// dict.
const CodecAnchor = "quantizer.semantic_quantizer.quantizers.0.codebook.weight"

// CodecOptions overrides the codec constants; zero values keep the defaults.
type CodecOptions struct {
	Window   int     // post-module attention window in frames
	RopeBase float64 // post-module RoPE base
}

// CodecGeometry is the shape of a codec, read from its tensors' shapes.
type CodecGeometry struct {
	Latent          int     // RVQ output / decoder input width (1024 in S2)
	CodebookDim     int     // dimension of each codebook entry (8)
	SemanticCodes   int     // entries of codebook 0 (4096)
	ResidualCodes   int     // entries of codebooks 1.. (1024)
	ResidualBooks   int     // residual codebooks (9)
	PostDim         int     // post-module transformer width
	PostLayers      int     // post-module layers (8 in S2)
	PostHeads       int     // PostDim / 64
	PostFFN         int     // SwiGLU width (3072 in S2)
	Window          int     // attention window, frames
	RopeBase        float64 // RoPE base
	UpsampleStrides []int   // quantizer.upsample stages ([2 2])
	DecoderDim      int     // width of the decoder's first conv (1536 in S2)
	DecoderStrides  []int   // decoder block strides ([8 8 4 2])
	SamplesPerFrame int     // product of all strides (2048)
	// HistoryFrames is the receptive field: decoding frames [from, to)
	// reads frames [from − HistoryFrames, to) (clamped at 0). The backend
	// that builds the decoder fills it.
	HistoryFrames int
}

// Codebooks is the number of codes per frame (10 in S2).
func (g CodecGeometry) Codebooks() int { return 1 + g.ResidualBooks }

// CodecConv is a conv's float32 weight as PyTorch stores it, weight norm
// folded: Conv1d [Out, In, Kernel], ConvTranspose1d [In, Out, Kernel].
type CodecConv struct {
	W, Bias          []float32
	Out, In, Kernel  int
	Dilation, Stride int // Dilation: Conv1d; Stride: ConvTranspose1d (0 otherwise)
}

// CodecQuantizer is one codebook [Size, CodebookDim] and its 1×1 out_proj
// to the latent width.
type CodecQuantizer struct {
	Size     int
	Codebook []float32
	Proj     CodecConv
}

// CodecPostLayer is one post-module transformer layer; matrices are
// [out, in] Linear weights without bias.
type CodecPostLayer struct {
	AttentionNorm, FFNNorm []float32 // [PostDim]
	WQKV                   []float32 // [3·PostDim, PostDim]
	WO                     []float32 // [PostDim, PostDim]
	W1, W3                 []float32 // [PostFFN, PostDim]
	W2                     []float32 // [PostDim, PostFFN]
	GammaAttn, GammaFF     []float32 // LayerScale [PostDim]
}

// CodecPost is the post-module: optional input and output projections
// (Linear with bias, Kernel 1), the layers, the final RMSNorm gain.
type CodecPost struct {
	InputProj  *CodecConv
	Layers     []CodecPostLayer
	Norm       []float32
	OutputProj *CodecConv
}

// CodecUpsample is one quantizer.upsample stage: a transposed conv (kernel
// = stride, bias, no weight norm) and a ConvNeXt block.
type CodecUpsample struct {
	Up           CodecConv // transposed
	DW           CodecConv // depthwise [ch, 1, kernel]
	NormW, NormB []float32 // LayerNorm [ch]
	PW1, PW2     CodecConv // Linear as kernel-1 convs
	Gamma        []float32 // [ch]
}

// CodecResidualUnit is x + Conv1(snake(Conv7(snake(x)))) with Snake alphas.
type CodecResidualUnit struct {
	Alpha1, Alpha2 []float32
	Conv7, Conv1   CodecConv
}

// CodecDecoderBlock is Snake → transposed conv (kernel 2·stride) → three
// residual units (CodecDilations).
type CodecDecoderBlock struct {
	Alpha []float32
	Up    CodecConv // transposed
	Units [3]CodecResidualUnit
}

// CodecDecoder is the DAC decoder: first conv, blocks, Snake, last conv
// (then tanh).
type CodecDecoder struct {
	First      CodecConv
	Blocks     []CodecDecoderBlock
	FinalAlpha []float32
	Last       CodecConv
}

// CodecWeights is a codec decoder's every weight in float32 with its
// geometry.
type CodecWeights struct {
	Geometry CodecGeometry
	Semantic CodecQuantizer
	Residual []CodecQuantizer
	Post     CodecPost
	Upsample []CodecUpsample
	Decoder  CodecDecoder
}

// ReadCodecFile reads a codec.pth through the restricted torch reader.
func ReadCodecFile(path string, opt CodecOptions) (*CodecWeights, error) {
	ts, err := checkpoint.ReadTorchFile(path)
	if err != nil {
		return nil, err
	}
	return ReadCodec(ts, opt)
}

// ReadCodecBytes reads a codec.pth image held in memory (the demo codec).
func ReadCodecBytes(b []byte, name string, opt CodecOptions) (*CodecWeights, error) {
	ts, err := checkpoint.ReadTorch(bytes.NewReader(b), int64(len(b)), name)
	if err != nil {
		return nil, err
	}
	return ReadCodec(ts, opt)
}

// ReadCodec binds a codec state dict: every tensor of the decode path by
// name with its shape checked against the geometry the others give, weight
// norm folded once in float32, values finite. Tensors of the decode path
// that it does not know are an error (naming them); encoder tensors are
// ignored.
func ReadCodec(ts *checkpoint.TensorSet, opt CodecOptions) (*CodecWeights, error) {
	g := CodecGeometry{}
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	g.Window, g.RopeBase = opt.Window, opt.RopeBase
	l, err := newCodecLoader(ts)
	if err != nil {
		return nil, err
	}
	w := &CodecWeights{}
	for _, step := range []func(*codecLoader, *CodecGeometry){w.readQuantizers, w.readPost, w.readUpsample, w.readDecoder} {
		step(l, &g)
		if l.err != nil {
			return nil, l.err
		}
	}
	if extra := l.unused(); len(extra) > 0 {
		return nil, unknownTensors("codec: tensors this decoder does not know", extra)
	}
	g.SamplesPerFrame = 1
	for _, s := range g.UpsampleStrides {
		g.SamplesPerFrame *= s
	}
	for _, s := range g.DecoderStrides {
		g.SamplesPerFrame *= s
	}
	w.Geometry = g
	return w, nil
}

// withDefaults checks opt and fills its zero fields with the defaults
// (CodecDefaultWindow, CodecDefaultRopeBase).
func (opt CodecOptions) withDefaults() (CodecOptions, error) {
	if opt.Window < 0 || opt.Window > CodecMaxFrames || opt.RopeBase < 0 {
		return opt, fmt.Errorf("codec: window %d must be in 1..%d and rope base %g positive", opt.Window, CodecMaxFrames, opt.RopeBase)
	}
	if opt.Window == 0 {
		opt.Window = CodecDefaultWindow
	}
	if opt.RopeBase == 0 {
		opt.RopeBase = CodecDefaultRopeBase
	}
	return opt, nil
}

// unknownTensors is the error for tensors a reader does not know, naming the
// first five of them.
func unknownTensors(what string, extra []string) error {
	more := ""
	if len(extra) > 5 {
		more = fmt.Sprintf(" and %d more", len(extra)-5)
		extra = extra[:5]
	}
	return fmt.Errorf("%s: %s%s", what, strings.Join(extra, ", "), more)
}

func (q *CodecQuantizer) read(l *codecLoader, prefix string, latent, dim int) {
	sh := l.shape(prefix + ".codebook.weight")
	if len(sh) != 2 || sh[1] != dim || sh[0] < 1 {
		l.fail("codec: tensor %s.codebook.weight has shape %v, want [entries %d]", prefix, sh, dim)
		return
	}
	q.Size = sh[0]
	q.Codebook = l.f32(prefix+".codebook.weight", q.Size, dim)
	q.Proj = CodecConv{W: l.weightNormed(prefix+".out_proj", latent, dim, 1), Bias: l.f32(prefix+".out_proj.bias", latent),
		Out: latent, In: dim, Kernel: 1, Dilation: 1}
}

func (w *CodecWeights) readQuantizers(l *codecLoader, g *CodecGeometry) {
	const sem = "quantizer.semantic_quantizer.quantizers.0"
	vName := sem + ".out_proj.weight_v"
	if !l.has(vName) {
		vName = sem + ".out_proj.parametrizations.weight.original1"
	}
	sh := l.shape(vName)
	if l.err != nil {
		return
	}
	if len(sh) != 3 || sh[2] != 1 {
		l.fail("codec: %s.out_proj weight has shape %v, want [latent, dim, 1]", sem, sh)
		return
	}
	g.Latent, g.CodebookDim = sh[0], sh[1]
	w.Semantic.read(l, sem, g.Latent, g.CodebookDim)
	g.SemanticCodes = w.Semantic.Size
	if l.has("quantizer.semantic_quantizer.quantizers.1.codebook.weight") {
		l.fail("codec: more than one semantic codebook (quantizer.semantic_quantizer.quantizers.1)")
	}
	for i := 0; l.has(fmt.Sprintf("quantizer.quantizer.quantizers.%d.codebook.weight", i)); i++ {
		var q CodecQuantizer
		q.read(l, fmt.Sprintf("quantizer.quantizer.quantizers.%d", i), g.Latent, g.CodebookDim)
		if i > 0 && q.Size != w.Residual[0].Size {
			l.fail("codec: residual codebook %d has %d entries, codebook 0 has %d", i, q.Size, w.Residual[0].Size)
		}
		w.Residual = append(w.Residual, q)
	}
	if len(w.Residual) == 0 {
		l.fail("codec: missing tensor quantizer.quantizer.quantizers.0.codebook.weight")
		return
	}
	g.ResidualBooks, g.ResidualCodes = len(w.Residual), w.Residual[0].Size
}

func (w *CodecWeights) readPost(l *codecLoader, g *CodecGeometry) {
	const p = "quantizer.post_module"
	t, ok := readCodecTransformer(l, p, g.Latent)
	if !ok {
		if l.err == nil {
			l.fail("codec: missing tensor %s.layers.0.attention.wqkv.weight", p)
		}
		return
	}
	w.Post = t.CodecPost
	g.PostLayers, g.PostFFN = len(t.Layers), t.FFN
	g.PostDim, g.PostHeads = t.Dim, t.Dim/CodecHeadDim
}

func (w *CodecWeights) readUpsample(l *codecLoader, g *CodecGeometry) {
	ch := g.Latent
	for i := 0; l.has(fmt.Sprintf("quantizer.upsample.%d.0.conv.weight", i)); i++ {
		p := fmt.Sprintf("quantizer.upsample.%d", i)
		sh := l.shape(p + ".0.conv.weight")
		if len(sh) != 3 || sh[0] != ch || sh[2] < 1 {
			l.fail("codec: tensor %s.0.conv.weight has shape %v, want [%d, out, kernel]", p, sh, ch)
			return
		}
		out, k := sh[1], sh[2]
		// The reference builds these with kernel_size = stride = factor.
		u := CodecUpsample{Up: CodecConv{W: l.f32(p+".0.conv.weight", ch, out, k), Bias: l.f32(p+".0.conv.bias", out),
			In: ch, Out: out, Kernel: k, Stride: k}}
		if l.err != nil {
			return
		}
		ch = out
		b, ok := l.convNeXt(p+".1", ch)
		if !ok {
			return
		}
		u.DW, u.NormW, u.NormB, u.PW1, u.PW2, u.Gamma = b.DW, b.NormW, b.NormB, b.PW1, b.PW2, b.Gamma
		w.Upsample = append(w.Upsample, u)
		g.UpsampleStrides = append(g.UpsampleStrides, k)
	}
	if len(w.Upsample) == 0 {
		l.fail("codec: missing tensor quantizer.upsample.0.0.conv.weight")
	}
}

// codecConvNeXt is the ConvNeXt block after each quantizer up- or
// downsample conv.
type codecConvNeXt struct {
	DW           CodecConv
	NormW, NormB []float32
	PW1, PW2     CodecConv
	Gamma        []float32
}

// convNeXt reads the ConvNeXt block of width ch at p (dwconv, norm, pwconv1,
// pwconv2, gamma); ok is false when the depthwise conv's shape is wrong.
func (l *codecLoader) convNeXt(p string, ch int) (b codecConvNeXt, ok bool) {
	dwSh := l.shape(p + ".dwconv.conv.weight")
	if len(dwSh) != 3 || dwSh[0] != ch || dwSh[1] != 1 {
		l.fail("codec: tensor %s.dwconv.conv.weight has shape %v, want [%d, 1, kernel]", p, dwSh, ch)
		return b, false
	}
	hid := ch * 4
	if s := l.shape(p + ".pwconv1.weight"); len(s) == 2 {
		hid = s[0]
	}
	b.DW = CodecConv{W: l.f32(p+".dwconv.conv.weight", dwSh...), Bias: l.f32(p+".dwconv.conv.bias", ch), Out: ch, In: 1, Kernel: dwSh[2], Dilation: 1}
	b.NormW, b.NormB = l.f32(p+".norm.weight", ch), l.f32(p+".norm.bias", ch)
	b.PW1 = CodecConv{W: l.f32(p+".pwconv1.weight", hid, ch), Bias: l.f32(p+".pwconv1.bias", hid), Out: hid, In: ch, Kernel: 1, Dilation: 1}
	b.PW2 = CodecConv{W: l.f32(p+".pwconv2.weight", ch, hid), Bias: l.f32(p+".pwconv2.bias", ch), Out: ch, In: hid, Kernel: 1, Dilation: 1}
	b.Gamma = l.f32(p+".gamma", ch)
	return b, true
}

func (w *CodecWeights) readDecoder(l *codecLoader, g *CodecGeometry) {
	in := g.Latent
	if n := len(w.Upsample); n > 0 {
		in = w.Upsample[n-1].Up.Out
	}
	alpha := func(name string, ch int) []float32 { return l.f32(name+".alpha", 1, ch, 1) }
	conv := func(name string, out, in, k, dil int) CodecConv {
		return CodecConv{W: l.weightNormed(name+".conv", out, in, k), Bias: l.f32(name+".conv.bias", out), Out: out, In: in, Kernel: k, Dilation: dil}
	}
	vShape := func(name string) []int {
		for _, suffix := range []string{".conv.parametrizations.weight.original1", ".conv.weight_v"} {
			if l.has(name + suffix) {
				return l.shape(name + suffix)
			}
		}
		l.fail("codec: missing tensor %s.conv.parametrizations.weight.original1", name)
		return nil
	}

	d := &w.Decoder
	sh := vShape("decoder.model.0")
	if len(sh) != 3 || sh[1] != in {
		l.fail("codec: decoder.model.0 weight has shape %v, want [dim, %d, kernel]", sh, in)
		return
	}
	g.DecoderDim = sh[0]
	d.First = conv("decoder.model.0", sh[0], in, sh[2], 1)
	ch := sh[0]
	i := 1
	for ; l.has(fmt.Sprintf("decoder.model.%d.block.0.alpha", i)); i++ {
		p := fmt.Sprintf("decoder.model.%d.block", i)
		tsh := vShape(p + ".1")
		if len(tsh) != 3 || tsh[0] != ch || tsh[2]%2 != 0 {
			l.fail("codec: %s.1 transposed-conv weight has shape %v, want [%d, out, 2·stride]", p, tsh, ch)
			return
		}
		out, k := tsh[1], tsh[2]
		b := CodecDecoderBlock{Alpha: alpha(p+".0", ch),
			Up: CodecConv{W: l.weightNormed(p+".1.conv", ch, out, k), Bias: l.f32(p+".1.conv.bias", out), In: ch, Out: out, Kernel: k, Stride: k / 2}}
		for j, dil := range CodecDilations {
			rp := fmt.Sprintf("%s.%d.block", p, 2+j)
			ksh := vShape(rp + ".1")
			if len(ksh) != 3 || ksh[0] != out || ksh[1] != out {
				l.fail("codec: %s.1 weight has shape %v, want [%d, %d, kernel]", rp, ksh, out, out)
				return
			}
			b.Units[j] = CodecResidualUnit{
				Alpha1: alpha(rp+".0", out),
				Conv7:  conv(rp+".1", out, out, ksh[2], dil),
				Alpha2: alpha(rp+".2", out),
				Conv1:  conv(rp+".3", out, out, 1, 1),
			}
		}
		if l.err != nil {
			return
		}
		d.Blocks = append(d.Blocks, b)
		g.DecoderStrides = append(g.DecoderStrides, k/2)
		ch = out
	}
	if len(g.DecoderStrides) == 0 {
		l.fail("codec: missing tensor decoder.model.1.block.0.alpha")
		return
	}
	d.FinalAlpha = alpha(fmt.Sprintf("decoder.model.%d", i), ch)
	fsh := vShape(fmt.Sprintf("decoder.model.%d", i+1))
	if len(fsh) != 3 || fsh[0] != 1 || fsh[1] != ch {
		l.fail("codec: decoder.model.%d weight has shape %v, want [1, %d, kernel]", i+1, fsh, ch)
		return
	}
	d.Last = conv(fmt.Sprintf("decoder.model.%d", i+1), 1, ch, fsh[2], 1)
}

// codecLoader fetches tensors from a codec state dict, remembering the first
// error and every tensor it consumed.
type codecLoader struct {
	ts     *checkpoint.TensorSet
	prefix string // before every key: "", "generator.", "state_dict.generator." …
	err    error
	used   map[string]bool
}

// newCodecLoader finds the prefix under which the codec's keys sit: none in
// a plain state dict; training checkpoints nest it (fish-speech's loader
// strips "state_dict" and "generator."). Exactly one key may end in the
// anchor.
func newCodecLoader(ts *checkpoint.TensorSet) (*codecLoader, error) {
	l := &codecLoader{ts: ts, used: map[string]bool{}}
	var found []string
	for _, n := range ts.Names() {
		if n == CodecAnchor || strings.HasSuffix(n, "."+CodecAnchor) {
			found = append(found, n)
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("codec: missing tensor %s (not a codec state dict?)", CodecAnchor)
	case 1:
		l.prefix = strings.TrimSuffix(found[0], CodecAnchor)
		return l, nil
	}
	return nil, fmt.Errorf("codec: %d codecs in one file (%s, %s)", len(found), found[0], found[1])
}

func (l *codecLoader) get(name string) *checkpoint.Tensor { return l.ts.Get(l.prefix + name) }

func (l *codecLoader) fail(format string, a ...any) {
	if l.err == nil {
		l.err = fmt.Errorf(format, a...)
	}
}

// has reports whether the tensor exists.
func (l *codecLoader) has(name string) bool { return l.get(name) != nil }

// shape returns a tensor's shape, or nil (and an error) if it is missing.
func (l *codecLoader) shape(name string) []int {
	t := l.get(name)
	if t == nil {
		l.fail("codec: missing tensor %s%s", l.prefix, name)
		return nil
	}
	return t.Shape
}

// f32 returns a tensor's values as float32, checking its shape.
func (l *codecLoader) f32(name string, shape ...int) []float32 {
	t := l.get(name)
	if t == nil {
		l.fail("codec: missing tensor %s%s", l.prefix, name)
		return nil
	}
	if !slices.Equal(t.Shape, shape) {
		l.fail("codec: tensor %s has shape %v, want %v", t.Name, t.Shape, shape)
		return nil
	}
	v, err := t.Float32s()
	if err != nil {
		l.fail("codec: %v", err)
		return nil
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			l.fail("codec: tensor %s holds a non-finite value at element %d", t.Name, i)
			return nil
		}
	}
	l.used[t.Name] = true
	return v
}

// weightNormed returns the weight of a weight-normed conv at prefix (the
// module holding `weight`), folded in float32: w = v · (g / ‖v‖) with the
// norm over every dim but 0, as torch's _weight_norm computes it. Both
// spellings are read: prefix.parametrizations.weight.original0/original1
// (torch.nn.utils.parametrizations) and prefix.weight_g/weight_v (the older
// torch.nn.utils.weight_norm). shape is v's shape.
func (l *codecLoader) weightNormed(prefix string, shape ...int) []float32 {
	gName, vName := prefix+".parametrizations.weight.original0", prefix+".parametrizations.weight.original1"
	if !l.has(gName) && l.has(prefix+".weight_g") {
		gName, vName = prefix+".weight_g", prefix+".weight_v"
	}
	gShape := make([]int, len(shape))
	for i := range gShape {
		gShape[i] = 1
	}
	if len(shape) > 0 {
		gShape[0] = shape[0]
	}
	g := l.f32(gName, gShape...)
	v := l.f32(vName, shape...)
	if g == nil || v == nil {
		return nil
	}
	rows := shape[0]
	per := len(v) / rows
	w := make([]float32, len(v))
	for r := 0; r < rows; r++ {
		vr := v[r*per : (r+1)*per]
		var ss float64
		for _, x := range vr {
			ss += float64(x) * float64(x)
		}
		norm := float32(math.Sqrt(ss))
		if norm == 0 {
			l.fail("codec: tensor %s%s: row %d of the weight-norm direction is zero", l.prefix, vName, r)
			return nil
		}
		scale := g[r] / norm
		for i, x := range vr {
			w[r*per+i] = x * scale
		}
	}
	return w
}

// unused lists the tensors under the decode path's prefixes that the loader
// did not consume: a checkpoint with modules this decoder does not know.
func (l *codecLoader) unused() []string {
	var out []string
	for _, full := range l.ts.Names() {
		n, ok := strings.CutPrefix(full, l.prefix)
		if l.used[full] || !ok {
			continue
		}
		decodePath := false
		for _, p := range []string{"decoder.", "quantizer.post_module.", "quantizer.upsample.", "quantizer.semantic_quantizer.", "quantizer.quantizer."} {
			decodePath = decodePath || strings.HasPrefix(n, p)
		}
		// The quantizers' in_proj projects encoder latents: encode only.
		if decodePath && !strings.Contains(n, ".in_proj.") {
			out = append(out, full)
		}
	}
	return out
}

package cpu

import (
	"fmt"
	"math/rand/v2"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// The loaded codec as a drama3.CodecPlan, for other backends (the CUDA codec
// binds its device weights from it, so the weight map and the geometry live
// in one place: codec_load.go and the stage loaders). Nothing here is
// copied: the slices are the reference's own, read-only.

func (c *codecConv) export() drama3.CodecConvWeights {
	return drama3.CodecConvWeights{In: c.in, Out: c.out, Kernel: c.kernel, Dilation: c.dilation, W: c.w, Bias: c.bias}
}

// codecConvOf is the conv of packed weights w.
func codecConvOf(w drama3.CodecConvWeights) *codecConv {
	return &codecConv{in: w.In, out: w.Out, kernel: w.Kernel, dilation: w.Dilation, w: w.W, bias: w.Bias}
}

// Plan exports the loaded codec's weights and stage order.
func (c *Codec) Plan() drama3.CodecPlan {
	q := func(x *codecQuantizer) drama3.CodecQuantizerWeights {
		return drama3.CodecQuantizerWeights{Entries: x.size, Codebook: x.codebook, Proj: x.proj.export()}
	}
	p := drama3.CodecPlan{Geometry: c.Geometry(), Semantic: q(&c.semantic)}
	for i := range c.residual {
		p.Residual = append(p.Residual, q(&c.residual[i]))
	}
	for _, st := range c.stages {
		s := drama3.CodecPlanStage{Label: st.label(), Up: st.up(), History: st.history(), Channels: st.channels()}
		switch x := st.(type) {
		case *codecBlock:
			s.Kind = drama3.CodecStageBlock
			s.Block = &drama3.CodecBlockWeights{Dim: x.dim, Heads: x.heads, Window: x.window, FFN: x.w1.out,
				RopeFreq: x.ropeFreq, AttnNorm: x.attnNorm, FFNNorm: x.ffnNorm,
				WQKV: x.wqkv.w, WO: x.wo.w, W1: x.w1.w, W3: x.w3.w, W2: x.w2.w,
				GammaAttn: x.gammaAttn, GammaFF: x.gammaFF}
		case *codecRMSNormStage:
			s.Kind, s.Norm = drama3.CodecStageRMSNorm, x.w
		case codecLinearStage:
			w := x.codecConv.export()
			s.Kind, s.Conv = drama3.CodecStageConv, &w
		case *codecConvStage:
			w := x.conv.export()
			s.Kind, s.Conv, s.Tanh = drama3.CodecStageConv, &w, x.tanh
		case *codecTransConvStage:
			w := x.conv.export()
			s.Kind, s.Conv, s.Stride, s.OutCh = drama3.CodecStageTransConv, &w, x.stride, x.out
		case *codecConvNeXt:
			s.Kind = drama3.CodecStageConvNeXt
			s.ConvNeXt = &drama3.CodecConvNeXtWeights{Ch: x.ch, Kernel: x.dw.kernel, Hidden: x.pw1.out,
				DW: x.dw.w, DWBias: x.dw.bias, NormW: x.normW, NormB: x.normB,
				PW1: x.pw1.export(), PW2: x.pw2.export(), Gamma: x.gamma}
		case codecSnakeStage:
			s.Kind, s.Alpha = drama3.CodecStageSnake, x.alpha
		case *codecResidualUnit:
			a, b := x.conv7.export(), x.conv1.export()
			s.Kind, s.Conv, s.Conv2, s.Alpha, s.Alpha2 = drama3.CodecStageResidual, &a, &b, x.snake1.alpha, x.snake2.alpha
		default:
			panic(fmt.Sprintf("codec plan: stage %T", st))
		}
		p.Stages = append(p.Stages, s)
	}
	return p
}

// CodecRandomTensors builds a codec state dict with the real key names and
// random weights (seeded): latent width, decoder width and post-module
// layers as given, the reference's strides (8 8 4 2), codebooks (4096 + 9 ×
// 1024 entries of 8) and FFN width (3·latent). S2 is latent 1024, decoder
// 1536, 8 layers. The scales keep every stage's activations of order one
// and the samples inside tanh's linear range.
func CodecRandomTensors(seed uint64, latent, decDim, layers int) *checkpoint.TensorSet {
	r := rand.New(rand.NewPCG(seed, 7))
	ts := checkpoint.NewTensorSet()
	rt := randomTensors{ts, r}
	add := rt.add
	quant := func(p string, size int) {
		add(p+".codebook.weight", 1, 0, size, 8)
		add(p+".out_proj.weight_g", 0.1, 1, latent, 1, 1)
		add(p+".out_proj.weight_v", 1, 0, latent, 8, 1)
		add(p+".out_proj.bias", 0.01, 0, latent)
	}
	quant("quantizer.semantic_quantizer.quantizers.0", 4096)
	for i := 0; i < 9; i++ {
		quant(fmt.Sprintf("quantizer.quantizer.quantizers.%d", i), 1024)
	}
	rt.transformerLayers("quantizer.post_module", latent, layers)
	add("quantizer.post_module.norm.weight", 0.1, 1, latent)
	for i := 0; i < 2; i++ {
		rt.resampleStage(fmt.Sprintf("quantizer.upsample.%d", i), latent)
	}
	// Weight norm fixes each output's weight norm at g: a conv keeps its
	// input's scale at g ≈ 1. Residual branches at 0.1 and the last conv at
	// 0.05 keep the decoder's activations of order one and the output inside
	// tanh's linear range, as a trained codec's (unit gains there grow the
	// activations to ±200 and saturate tanh, PCM rms 0.99).
	wnConv := func(p string, out, in, k int, gain float64) {
		add(p+".conv.parametrizations.weight.original0", 0.1*gain, gain, out, 1, 1)
		add(p+".conv.parametrizations.weight.original1", 1, 0, out, in, k)
		add(p+".conv.bias", 0.01, 0, out)
	}
	wnConv("decoder.model.0", decDim, latent, 7, 1)
	ch := decDim
	for b, stride := range []int{8, 8, 4, 2} {
		p := fmt.Sprintf("decoder.model.%d.block", b+1)
		add(p+".0.alpha", 0.1, 1, 1, ch, 1)
		add(p+".1.conv.parametrizations.weight.original0", 0.1, 1, ch, 1, 1)
		add(p+".1.conv.parametrizations.weight.original1", 1, 0, ch, ch/2, 2*stride)
		add(p+".1.conv.bias", 0.01, 0, ch/2)
		ch /= 2
		for u := 0; u < 3; u++ {
			rp := fmt.Sprintf("%s.%d.block", p, 2+u)
			add(rp+".0.alpha", 0.1, 1, 1, ch, 1)
			wnConv(rp+".1", ch, ch, 7, 1)
			add(rp+".2.alpha", 0.1, 1, 1, ch, 1)
			wnConv(rp+".3", ch, ch, 1, 0.1)
		}
	}
	add("decoder.model.5.alpha", 0.1, 1, 1, ch, 1)
	wnConv("decoder.model.6", 1, ch, 7, 0.05)
	return ts
}

// randomTensors adds tensors of seeded normal values (offset + scale·N(0,1))
// with the codec's key names to a set; the order of the calls fixes the
// values, so the decoder (CodecRandomTensors) and the encoder tensors of the
// benchmarks draw theirs through the same blocks.
type randomTensors struct {
	ts *checkpoint.TensorSet
	r  *rand.Rand
}

func (rt randomTensors) add(name string, scale, offset float64, shape ...int) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(offset + scale*rt.r.NormFloat64())
	}
	if err := rt.ts.Add(checkpoint.Float32Tensor(name, shape, v)); err != nil {
		panic(err)
	}
}

// transformerLayers adds layers transformer layers of width d (FFN 3·d) at
// p.layers.N (not the final norm).
func (rt randomTensors) transformerLayers(p string, d, layers int) {
	for i := 0; i < layers; i++ {
		lp := fmt.Sprintf("%s.layers.%d", p, i)
		rt.add(lp+".attention.wqkv.weight", 0.02, 0, 3*d, d)
		rt.add(lp+".attention.wo.weight", 0.02, 0, d, d)
		rt.add(lp+".feed_forward.w1.weight", 0.02, 0, 3*d, d)
		rt.add(lp+".feed_forward.w3.weight", 0.02, 0, 3*d, d)
		rt.add(lp+".feed_forward.w2.weight", 0.02, 0, d, 3*d)
		rt.add(lp+".ffn_norm.weight", 0.1, 1, d)
		rt.add(lp+".attention_norm.weight", 0.1, 1, d)
		rt.add(lp+".attention_layer_scale.gamma", 0.01, 0.1, d)
		rt.add(lp+".ffn_layer_scale.gamma", 0.01, 0.1, d)
	}
}

// resampleStage adds one quantizer up- or downsample stage at p: a stride-2
// conv and a ConvNeXt block of width latent.
func (rt randomTensors) resampleStage(p string, latent int) {
	rt.add(p+".0.conv.weight", 0.05, 0, latent, latent, 2)
	rt.add(p+".0.conv.bias", 0.01, 0, latent)
	rt.add(p+".1.dwconv.conv.weight", 0.3, 0, latent, 1, 7)
	rt.add(p+".1.dwconv.conv.bias", 0.01, 0, latent)
	rt.add(p+".1.norm.weight", 0.1, 1, latent)
	rt.add(p+".1.norm.bias", 0.01, 0, latent)
	rt.add(p+".1.pwconv1.weight", 0.03, 0, 4*latent, latent)
	rt.add(p+".1.pwconv1.bias", 0.01, 0, 4*latent)
	rt.add(p+".1.pwconv2.weight", 0.02, 0, latent, 4*latent)
	rt.add(p+".1.pwconv2.bias", 0.01, 0, latent)
	rt.add(p+".1.gamma", 0.01, 0.1, latent)
}

// CodecRandomCodes is frames of random in-range codes (frame-major, 10 per
// frame: one of 4096 semantic entries, nine of 1024).
func CodecRandomCodes(seed uint64, frames int) []int32 {
	r := rand.New(rand.NewPCG(seed, 9))
	codes := make([]int32, frames*10)
	for i := range codes {
		if i%10 == 0 {
			codes[i] = int32(r.IntN(4096))
		} else {
			codes[i] = int32(r.IntN(1024))
		}
	}
	return codes
}

// AddCodecEncoderRandomTensors adds random encoder-side tensors with the real key
// names to ts: encoder width dim, strides 2 4 8 8, transformer layers
// tLayers after each block (window 512), the latent conv, the downsample
// stages, preLayers pre-module layers and every quantizer's in_proj (with
// CodecRandomTensors: the S2 encoder benchmarks, CPU and GPU).
func AddCodecEncoderRandomTensors(ts *checkpoint.TensorSet, seed uint64, dim, latent int, tLayers [4]int, preLayers int) {
	r := rand.New(rand.NewPCG(seed, 11))
	rt := randomTensors{ts, r}
	add := rt.add
	wnConv := func(p string, out, in, k int) {
		add(p+".conv.parametrizations.weight.original0", 0.1, 1, out, 1, 1)
		add(p+".conv.parametrizations.weight.original1", 1, 0, out, in, k)
		add(p+".conv.bias", 0.01, 0, out)
	}
	transformer := func(p string, d, layers int) {
		rt.transformerLayers(p, d, layers)
		if layers > 0 {
			add(p+".norm.weight", 0.1, 1, d)
		}
	}
	wnConv("encoder.block.0", dim, 1, 7)
	ch := dim
	for b, stride := range []int{2, 4, 8, 8} {
		p := fmt.Sprintf("encoder.block.%d.block", b+1)
		for u := 0; u < 3; u++ {
			rp := fmt.Sprintf("%s.%d.block", p, u)
			add(rp+".0.alpha", 0.1, 1, 1, ch, 1)
			wnConv(rp+".1", ch, ch, 7)
			add(rp+".2.alpha", 0.1, 1, 1, ch, 1)
			wnConv(rp+".3", ch, ch, 1)
		}
		add(p+".3.alpha", 0.1, 1, 1, ch, 1)
		wnConv(p+".4", 2*ch, ch, 2*stride)
		ch *= 2
		transformer(p+".5", ch, tLayers[b])
	}
	add("encoder.block.5.alpha", 0.1, 1, 1, ch, 1)
	wnConv("encoder.block.6", latent, ch, 3)
	for i := 0; i < 2; i++ {
		rt.resampleStage(fmt.Sprintf("quantizer.downsample.%d", i), latent)
	}
	transformer("quantizer.pre_module", latent, preLayers)
	inProj := func(p string) {
		add(p+".in_proj.weight_g", 0.1, 1, 8, 1, 1)
		add(p+".in_proj.weight_v", 1, 0, 8, latent, 1)
		add(p+".in_proj.bias", 0.01, 0, 8)
	}
	inProj("quantizer.semantic_quantizer.quantizers.0")
	for i := 0; i < 9; i++ {
		inProj(fmt.Sprintf("quantizer.quantizer.quantizers.%d", i))
	}
}

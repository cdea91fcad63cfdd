package cpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
	"proscenium/engine/internal/testutil"
)

// Codec decode speed (docs/PERF.md, Codec section). Not part of the default
// test run:
//
//	go test ./engine/cpu -run '^$' -bench 'Codec' -benchtime 1x
//
// s/audio-s is seconds of compute per second of audio (the real-time factor).

// codecRandomTensors builds a codec state dict with the real key names and
// random weights: latent width, decoder width, post-module layers, window
// of the given sizes, the reference's strides and codebooks.
func codecRandomTensors(seed uint64, latent, decDim, layers int) *checkpoint.TensorSet {
	r := rand.New(rand.NewPCG(seed, 7))
	ts := checkpoint.NewTensorSet()
	add := func(name string, scale float64, offset float64, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(offset + scale*r.NormFloat64())
		}
		if err := ts.Add(checkpoint.Float32Tensor(name, shape, v)); err != nil {
			panic(err)
		}
	}
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
	for i := 0; i < layers; i++ {
		p := fmt.Sprintf("quantizer.post_module.layers.%d", i)
		add(p+".attention.wqkv.weight", 0.02, 0, 3*latent, latent)
		add(p+".attention.wo.weight", 0.02, 0, latent, latent)
		add(p+".feed_forward.w1.weight", 0.02, 0, 3*latent, latent)
		add(p+".feed_forward.w3.weight", 0.02, 0, 3*latent, latent)
		add(p+".feed_forward.w2.weight", 0.02, 0, latent, 3*latent)
		add(p+".ffn_norm.weight", 0.1, 1, latent)
		add(p+".attention_norm.weight", 0.1, 1, latent)
		add(p+".attention_layer_scale.gamma", 0.01, 0.1, latent)
		add(p+".ffn_layer_scale.gamma", 0.01, 0.1, latent)
	}
	add("quantizer.post_module.norm.weight", 0.1, 1, latent)
	for i := 0; i < 2; i++ {
		p := fmt.Sprintf("quantizer.upsample.%d", i)
		add(p+".0.conv.weight", 0.05, 0, latent, latent, 2)
		add(p+".0.conv.bias", 0.01, 0, latent)
		add(p+".1.dwconv.conv.weight", 0.3, 0, latent, 1, 7)
		add(p+".1.dwconv.conv.bias", 0.01, 0, latent)
		add(p+".1.norm.weight", 0.1, 1, latent)
		add(p+".1.norm.bias", 0.01, 0, latent)
		add(p+".1.pwconv1.weight", 0.03, 0, 4*latent, latent)
		add(p+".1.pwconv1.bias", 0.01, 0, 4*latent)
		add(p+".1.pwconv2.weight", 0.02, 0, latent, 4*latent)
		add(p+".1.pwconv2.bias", 0.01, 0, latent)
		add(p+".1.gamma", 0.01, 0.1, latent)
	}
	wnConv := func(p string, out, in, k int) {
		add(p+".conv.parametrizations.weight.original0", 0.1, 1, out, 1, 1)
		add(p+".conv.parametrizations.weight.original1", 1, 0, out, in, k)
		add(p+".conv.bias", 0.01, 0, out)
	}
	wnConv("decoder.model.0", decDim, latent, 7)
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
			wnConv(rp+".1", ch, ch, 7)
			add(rp+".2.alpha", 0.1, 1, 1, ch, 1)
			wnConv(rp+".3", ch, ch, 1)
		}
	}
	add("decoder.model.5.alpha", 0.1, 1, 1, ch, 1)
	wnConv("decoder.model.6", 1, ch, 7)
	return ts
}

func randomCodes(seed uint64, frames int) []int32 {
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

// benchDecode times Decode(codes, from, to) and reports the real-time factor.
func benchDecode(b *testing.B, c *Codec, codes []int32, from, to int) {
	ws := &CodecScratch{}
	if _, err := c.Decode(codes, from, to, ws); err != nil { // size the scratch
		b.Fatal(err)
	}
	audioSec := float64((to-from)*c.Geometry().SamplesPerFrame) / 44100
	b.ResetTimer()
	start, cpu0 := time.Now(), testutil.ProcessCPUSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := c.Decode(codes, from, to, ws); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(time.Since(start).Seconds()/float64(b.N)/audioSec, "s/audio-s")
	// CPU seconds of the whole process: robust to other load on the machine.
	b.ReportMetric((testutil.ProcessCPUSeconds()-cpu0)/float64(b.N)/audioSec, "cpu-s/audio-s")
}

func BenchmarkCodecDecodeFixtures(b *testing.B) {
	for _, name := range []string{"tiny-w8", "tiny-w128"} {
		f := loadCodecFixtures(b)[name]
		b.Run(name+"/whole", func(b *testing.B) { benchDecode(b, f.codec, f.codes, 0, f.nf) })
		b.Run(name+"/chunk8-at-16", func(b *testing.B) { benchDecode(b, f.codec, f.codes, 16, 24) })
		b.Run(name+"/stream8", func(b *testing.B) { benchStream(b, f.codec, f.codes, 8) })
	}
}

// BenchmarkCodecDecodeS2 is the full S2 geometry (latent 1024, 8 post-module
// layers of 16 heads, window 128, decoder 1536) with random weights: a whole
// decode of 16 frames from the start, and a streaming chunk of 8 frames deep
// in a take, which recomputes its receptive field (1026 frames of the
// post-module's window, a few frames of the convolutions).
func BenchmarkCodecDecodeS2(b *testing.B) {
	c, err := LoadCodec(codecRandomTensors(1, 1024, 1536, 8), drama3.CodecOptions{})
	if err != nil {
		b.Fatal(err)
	}
	g := c.Geometry()
	if g.HistoryFrames != 1026 || g.SamplesPerFrame != 2048 || g.PostHeads != 16 {
		b.Fatalf("geometry %+v", g)
	}
	codes := randomCodes(2, 1200)
	b.Run("whole16", func(b *testing.B) { benchDecode(b, c, codes, 0, 16) })
	b.Run("chunk8-at-1100", func(b *testing.B) { benchDecode(b, c, codes, 1100, 1108) })
	b.Run("stream8", func(b *testing.B) { benchStream(b, c, codes, 8) })
}

// benchStream pushes chunks of n frames to a CodecStream (after a first
// chunk that is not timed) and reports the real-time factor.
func benchStream(b *testing.B, c *Codec, codes []int32, n int) {
	s := c.NewStream()
	if _, err := s.Push(codes[:n*10]); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start, cpu0 := time.Now(), testutil.ProcessCPUSeconds()
	for i := 0; i < b.N; i++ {
		f := s.Frames()
		if _, err := s.Push(codes[f*10 : (f+n)*10]); err != nil {
			b.Fatal(err)
		}
	}
	audioSec := float64(n*c.Geometry().SamplesPerFrame) / 44100 * float64(b.N)
	b.ReportMetric(time.Since(start).Seconds()/audioSec, "s/audio-s")
	b.ReportMetric((testutil.ProcessCPUSeconds()-cpu0)/audioSec, "cpu-s/audio-s")
}

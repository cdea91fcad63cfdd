package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
	"proscenium/engine/internal/testutil"
)

// Codec encode speed (docs/PERF.md, Codec encoder section). Not part of the
// default test run:
//
//	go test ./engine/cpu -run '^$' -bench 'CodecEncode' -benchtime 2x
//
// cpu-s/audio-s is CPU seconds per second of reference audio.

// addCodecEncoderTensors adds random encoder-side tensors with the real key
// names to ts: encoder width dim, strides 2 4 8 8, transformer layers
// tLayers after each block (window 512), the latent conv, the downsample
// stages, preLayers pre-module layers and every quantizer's in_proj.
func addCodecEncoderTensors(ts *checkpoint.TensorSet, seed uint64, dim, latent int, tLayers [4]int, preLayers int) {
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

// BenchmarkCodecEncodeS2 encodes 3 s of a voiced synthetic signal with the
// full S2 geometry (encoder 64 → 1024 with 4 transformer layers after the
// last block, latent 1024, pre-module of 8 layers) and random weights.
func BenchmarkCodecEncodeS2(b *testing.B) {
	ts := CodecRandomTensors(1, 1024, 1536, 8)
	addCodecEncoderTensors(ts, 2, 64, 1024, [4]int{0, 0, 0, 4}, 8)
	enc, err := LoadCodecEncoder(ts, drama3.CodecOptions{})
	if err != nil {
		b.Fatal(err)
	}
	benchEncode(b, enc, 3*44100)
}

// BenchmarkCodecEncodeFixture encodes the tiny-w128 golden's audio.
func BenchmarkCodecEncodeFixture(b *testing.B) {
	enc, fx := loadCodecEncodeFixture(b, "tiny-w128")
	benchEncodeAudio(b, enc, fx.audio)
}

func benchEncode(b *testing.B, enc *CodecEncoder, n int) {
	audio := make([]float32, n)
	for i := range audio {
		t := float64(i) / 44100
		audio[i] = float32(0.3*math.Sin(2*math.Pi*140*t)*math.Sin(2*math.Pi*3*t) + 0.05*math.Sin(2*math.Pi*2300*t))
	}
	benchEncodeAudio(b, enc, audio)
}

func benchEncodeAudio(b *testing.B, enc *CodecEncoder, audio []float32) {
	audioSec := float64(len(audio)) / 44100
	b.ResetTimer()
	start, cpu0 := time.Now(), testutil.ProcessCPUSeconds()
	for i := 0; i < b.N; i++ {
		if _, err := enc.Encode(audio); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(time.Since(start).Seconds()/float64(b.N)/audioSec, "s/audio-s")
	b.ReportMetric((testutil.ProcessCPUSeconds()-cpu0)/float64(b.N)/audioSec, "cpu-s/audio-s")
}

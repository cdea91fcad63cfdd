package cpu

import (
	"math"

	"testing"
	"time"

	"proscenium/engine/drama3"
	"proscenium/engine/internal/testutil"
)

// Codec encode speed (docs/PERF.md, Codec encoder section). Not part of the
// default test run:
//
//	go test ./engine/cpu -run '^$' -bench 'CodecEncode' -benchtime 2x
//
// cpu-s/audio-s is CPU seconds per second of reference audio.

// BenchmarkCodecEncodeS2 encodes 3 s of a voiced synthetic signal with the
// full S2 geometry (encoder 64 → 1024 with 4 transformer layers after the
// last block, latent 1024, pre-module of 8 layers) and random weights.
func BenchmarkCodecEncodeS2(b *testing.B) {
	ts := CodecRandomTensors(1, 1024, 1536, 8)
	AddCodecEncoderRandomTensors(ts, 2, 64, 1024, [4]int{0, 0, 0, 4}, 8)
	enc, err := LoadCodecEncoder(ts, drama3.CodecOptions{})
	if err != nil {
		b.Fatal(err)
	}
	benchEncode(b, enc, 3*44100)
}

// BenchmarkCodecEncodeFixture encodes the tiny-w128 golden's audio.
func BenchmarkCodecEncodeFixture(b *testing.B) {
	enc, fx := loadCodecEncodeFixture(b, "tiny-w128")
	benchEncodeAudio(b, enc, fx.Audio)
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

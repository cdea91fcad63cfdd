package cpu

import (
	"testing"
	"time"

	"proscenium/engine/drama3"
	"proscenium/engine/internal/testutil"
)

// Codec decode speed (docs/PERF.md, Codec section). Not part of the default
// test run:
//
//	go test ./engine/cpu -run '^$' -bench 'Codec' -benchtime 1x
//
// s/audio-s is seconds of compute per second of audio (the real-time factor).

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
	c, err := LoadCodec(CodecRandomTensors(1, 1024, 1536, 8), drama3.CodecOptions{})
	if err != nil {
		b.Fatal(err)
	}
	g := c.Geometry()
	if g.HistoryFrames != 1026 || g.SamplesPerFrame != 2048 || g.PostHeads != 16 {
		b.Fatalf("geometry %+v", g)
	}
	codes := CodecRandomCodes(2, 1200)
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

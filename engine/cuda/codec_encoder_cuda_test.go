//go:build cuda

package cuda

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// The GPU codec encoder against the public reference's DAC.encode (the enc/
// goldens of each codec case, read from PROSCENIUM_CODEC_TESTDATA or the
// repository) with the CPU encoder's rule: z_enc and z_pre within 1e-4
// relative, codes equal in at least 95 % of frames and every other frame a
// near-tie of the reference (cpu.CodecCodesMatch). On the S2 geometry with
// random weights, against the CPU encoder, and its cost (GPU wall seconds
// per second of audio, logged for docs/PERF.md).

const encodeTol = 1e-4

// loadEncodeGolden reads a codec case's enc/ golden.
func loadEncodeGolden(t *testing.T, name string) *cpu.CodecEncodeGolden {
	t.Helper()
	g, err := cpu.ReadCodecEncodeGolden(filepath.Join(codecTestdata(), name))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkEncoding applies the golden rule to got against the reference codes
// and margins and the reference z_enc, z_pre (any may be nil: not checked).
func checkEncoding(t *testing.T, name string, got *drama3.CodecEncoding, zEnc, zPre []float32, codes []int32, margins []float32, nb int) {
	t.Helper()
	for _, s := range []struct {
		name      string
		got, want []float32
	}{{"z_enc", got.ZEnc, zEnc}, {"z_pre", got.ZPre, zPre}} {
		if s.want == nil {
			continue
		}
		rel := relErr(s.got, s.want)
		t.Logf("%s %s: relative error %.2e", name, s.name, rel)
		if !(rel < encodeTol) {
			t.Errorf("%s %s: relative error %g, want below %g", name, s.name, rel, encodeTol)
		}
	}
	same, err := cpu.CodecCodesMatch(got.Codes, codes, margins, nb, encodeTol)
	if err != nil {
		t.Errorf("%s: %v", name, err)
	}
	frames := len(codes) / nb
	t.Logf("%s: codes equal in %d of %d frames", name, same, frames)
	if same*100 < 95*frames {
		t.Errorf("%s: codes equal in %d of %d frames, want at least 95 %%", name, same, frames)
	}
	for i, m := range got.Margins {
		if got.Codes[i] == codes[i] && math.Abs(float64(m-margins[i])) > encodeTol {
			t.Errorf("%s: margin %d is %g, the reference's %g", name, i, m, margins[i])
			break
		}
	}
}

func TestCodecEncoderGoldens(t *testing.T) {
	for _, name := range []string{"tiny-w8", "tiny-w128"} {
		g := loadEncodeGolden(t, name)
		enc, err := NewCodecEncoder(dev, g.Weights)
		if err != nil {
			t.Fatal(err)
		}
		got, err := enc.Encode(g.Audio)
		enc.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Frames != g.Frames {
			t.Fatalf("%s: %d frames, want %d", name, got.Frames, g.Frames)
		}
		checkEncoding(t, name, got, g.ZEnc, g.ZPre, g.Codes, g.Margins, g.Weights.Geometry.Codebooks)
	}
}

func TestCodecEncoderRefuses(t *testing.T) {
	w := loadEncodeGolden(t, "tiny-w8").Weights
	enc, err := NewCodecEncoder(dev, w)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	for _, tc := range []struct {
		audio []float32
		want  string
	}{
		{nil, "no audio"},
		{[]float32{0, float32(math.NaN())}, "sample 1 is not finite"},
		{[]float32{float32(math.Inf(1))}, "sample 0 is not finite"},
	} {
		if _, err := enc.Encode(tc.audio); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Encode(%v): %v, want %q", tc.audio, err, tc.want)
		}
	}
	// A short input is padded to one frame.
	if res, err := enc.Encode(make([]float32, 10)); err != nil || res.Frames != 1 || len(res.Codes) != w.Geometry.Codebooks {
		t.Errorf("10 samples: %+v, %v", res, err)
	}
}

// voicedSignal is n samples of the CPU benchmark's voiced synthetic signal.
func voicedSignal(n int) []float32 {
	audio := make([]float32, n)
	for i := range audio {
		t := float64(i) / 44100
		audio[i] = float32(0.3*math.Sin(2*math.Pi*140*t)*math.Sin(2*math.Pi*3*t) + 0.05*math.Sin(2*math.Pi*2300*t))
	}
	return audio
}

// TestCodecEncoderS2 encodes 3 s on the S2 geometry (random weights, as the
// CPU benchmark BenchmarkCodecEncodeS2) on the GPU and the CPU and compares
// them by the golden rule (the CPU's margins); then times GPU encodes of 3,
// 10 and 30 s (docs/PERF.md "GPU voices").
func TestCodecEncoderS2(t *testing.T) {
	ts := cpu.CodecRandomTensors(1, 1024, 1536, 8)
	cpu.AddCodecEncoderRandomTensors(ts, 2, 64, 1024, [4]int{0, 0, 0, 4}, 8)
	w, err := drama3.ReadCodecEncoder(ts, drama3.CodecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := cpu.NewCodecEncoder(w)
	enc, err := NewCodecEncoder(dev, w)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	audio := voicedSignal(3 * 44100)
	t0 := time.Now()
	want, err := ref.Encode(audio)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CPU encode of 3 s: %.2f s wall", time.Since(t0).Seconds())
	got, err := enc.Encode(audio)
	if err != nil {
		t.Fatal(err)
	}
	checkEncoding(t, "s2-random vs the CPU", got, want.ZEnc, want.ZPre, want.Codes, want.Margins, w.Geometry.Codebooks)
	if testing.Short() {
		return // the timings below: without -test.short
	}
	for _, sec := range []int{3, 10, 30} {
		a := voicedSignal(sec * 44100)
		if _, err := enc.Encode(a); err != nil { // warm: kernels loaded, memory touched
			t.Fatal(err)
		}
		const reps = 3
		t0 := time.Now()
		for i := 0; i < reps; i++ {
			if _, err := enc.Encode(a); err != nil {
				t.Fatal(err)
			}
		}
		el := time.Since(t0).Seconds() / reps
		t.Logf("GPU encode S2, %d s of audio: %.4f s wall per encode, %.5f GPU s per audio s", sec, el, el/float64(sec))
	}
}

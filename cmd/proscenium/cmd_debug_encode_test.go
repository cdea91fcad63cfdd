package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/engine/audio/pcm"
	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
)

// TestDebugEncodeFixtures runs the driver on both encode goldens (as .npy
// and as a float32 WAV) and checks its outputs against the reference's.
func TestDebugEncodeFixtures(t *testing.T) {
	root := filepath.Join("..", "..", "engine")
	for _, tc := range []struct {
		name, codec, window string
		wav                 bool
	}{
		{"tiny-w8", filepath.Join(root, "cpu", "testdata", "codec", "tiny-w8", "codec.pth"), "8", false},
		{"tiny-w128", filepath.Join(root, "demo", "codec.pth"), "128", true},
	} {
		fix := filepath.Join(root, "cpu", "testdata", "codec", tc.name, "enc")
		dir := t.TempDir()
		in := filepath.Join(fix, "audio.npy")
		if tc.wav {
			in = filepath.Join(dir, "ref.wav")
			if err := pcm.WriteWAV(in, readF32(t, filepath.Join(fix, "audio.npy")), pcm.SampleRate, pcm.Float32); err != nil {
				t.Fatal(err)
			}
		}
		if err := runDebugEncode([]string{"--codec", tc.codec, "--audio", in, "--window", tc.window, "--out", dir}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		codes := readNPY(t, filepath.Join(dir, "codes.npy"))
		if codes.DType != checkpoint.I64 || len(codes.Shape) != 2 || codes.Shape[0] != 10 {
			t.Fatalf("%s: codes %s %v, want int64 [10, T]", tc.name, codes.DType, codes.Shape)
		}
		got, nf, err := cpu.CodecCodesFromNPY(codes)
		if err != nil {
			t.Fatal(err)
		}
		want, wf, err := cpu.CodecCodesFromNPY(readNPY(t, filepath.Join(fix, "codes.npy")))
		if err != nil || nf != wf {
			t.Fatalf("%s: %d frames, want %d (%v)", tc.name, nf, wf, err)
		}
		m := readF32(t, filepath.Join(fix, "margins.npy"))
		margins := make([]float32, len(m))
		for i := 0; i < 10; i++ {
			for f := 0; f < nf; f++ {
				margins[f*10+i] = m[i*nf+f]
			}
		}
		if same, err := cpu.CodecCodesMatch(got, want, margins, 10, 1e-4); err != nil || same*100 < 95*nf {
			t.Errorf("%s: %d of %d frames equal, %v", tc.name, same, nf, err)
		}
		for _, f := range []string{"z_pre.npy", "z_enc.npy"} {
			g, w := readF32(t, filepath.Join(dir, f)), readF32(t, filepath.Join(fix, f))
			if rel := relErr(g, w); !(rel < 1e-4) {
				t.Errorf("%s %s: relative error %g", tc.name, f, rel)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "margins.npy")); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

func TestDebugEncodeUsage(t *testing.T) {
	fix := filepath.Join("..", "..", "engine", "cpu", "testdata", "codec", "tiny-w8")
	dir := t.TempDir()
	wav := filepath.Join(dir, "22k.wav")
	if err := pcm.WriteWAV(wav, make([]float32, 100), 22050, pcm.PCM16); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--audio", "x.npy", "--out", "."}, true, "required"},
		{[]string{"--codec", "a", "--audio", "b", "--out", ".", "--window", "-1"}, true, "window"},
		{[]string{"--codec", "a", "--audio", "b", "--out", filepath.Join(dir, "none")}, false, "not a directory"},
		{[]string{"--codec", filepath.Join(fix, "codec.pth"), "--audio", filepath.Join(fix, "codes.npy"), "--out", dir}, false, "want [samples]"},
		{[]string{"--codec", filepath.Join(fix, "codec.pth"), "--audio", wav, "--out", dir}, false, "22050 Hz"},
	} {
		err := runDebugEncode(tc.args)
		if err == nil || errors.Is(err, errUsage) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v (usage %v), want %q", tc.args, err, errors.Is(err, errUsage), tc.want)
		}
	}
}

// relErr is ‖a − b‖/‖b‖ (NaN-aware: a NaN makes it NaN).
func relErr(a, b []float32) float64 {
	if len(a) != len(b) {
		return 1
	}
	var num, den float64
	for i := range b {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num / den)
}

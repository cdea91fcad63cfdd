package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/engine/checkpoint"
)

// TestDebugDecodeFixtures runs the driver on both codec goldens and compares
// its PCM (and stage outputs) with the reference's.
func TestDebugDecodeFixtures(t *testing.T) {
	root := filepath.Join("..", "..", "engine")
	for _, tc := range []struct {
		name, codec string
		window      string
	}{
		{"tiny-w8", filepath.Join(root, "cpu", "testdata", "codec", "tiny-w8", "codec.pth"), "8"},
		{"tiny-w128", filepath.Join(root, "demo", "codec.pth"), "128"},
	} {
		fix := filepath.Join(root, "cpu", "testdata", "codec", tc.name)
		dir := t.TempDir()
		out := filepath.Join(dir, "pcm.npy")
		args := []string{"--codec", tc.codec, "--codes", filepath.Join(fix, "codes.npy"), "--window", tc.window,
			"--out", out, "--stages", dir, "--wav", filepath.Join(dir, "take.wav")}
		if err := runDebugDecode(args); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, f := range []string{"pcm.npy", "z_rvq.npy", "z_post.npy", "z_up.npy"} {
			got := readF32(t, filepath.Join(dir, f))
			want := readF32(t, filepath.Join(fix, f))
			if len(got) != len(want) {
				t.Fatalf("%s %s: %d values, want %d", tc.name, f, len(got), len(want))
			}
			var num, den float64
			for i := range want {
				d := float64(got[i]) - float64(want[i])
				num += d * d
				den += float64(want[i]) * float64(want[i])
			}
			if rel := math.Sqrt(num / den); !(rel < 1e-5) {
				t.Errorf("%s %s: relative error %g", tc.name, f, rel)
			}
		}
		if st, err := os.Stat(filepath.Join(dir, "take.wav")); err != nil || st.Size() < 4*2048 {
			t.Errorf("%s: WAV not written (%v)", tc.name, err)
		}
	}
}

// TestDebugDecodeChunk: --from/--to write exactly the whole decode's samples
// of those frames.
func TestDebugDecodeChunk(t *testing.T) {
	fix := filepath.Join("..", "..", "engine", "cpu", "testdata", "codec", "tiny-w8")
	dir := t.TempDir()
	whole, part := filepath.Join(dir, "whole.npy"), filepath.Join(dir, "part.npy")
	base := []string{"--codec", filepath.Join(fix, "codec.pth"), "--codes", filepath.Join(fix, "codes.npy"), "--window", "8"}
	if err := runDebugDecode(append(base, "--out", whole)); err != nil {
		t.Fatal(err)
	}
	if err := runDebugDecode(append(base, "--out", part, "--from", "30", "--to", "33")); err != nil {
		t.Fatal(err)
	}
	w, p := readF32(t, whole), readF32(t, part)
	if len(p) != 3*2048 {
		t.Fatalf("chunk of %d samples, want %d", len(p), 3*2048)
	}
	for i := range p {
		if math.Float32bits(p[i]) != math.Float32bits(w[30*2048+i]) {
			t.Fatalf("chunk sample %d differs from the whole decode", i)
		}
	}
	err := runDebugDecode(append(base, "--out", part, "--from", "5", "--to", "99"))
	if err == nil || !strings.Contains(err.Error(), "outside the 40 frames") {
		t.Errorf("chunk past the end: %v", err)
	}
}

func TestDebugDecodeUsage(t *testing.T) {
	fix := filepath.Join("..", "..", "engine", "cpu", "testdata", "codec", "tiny-w8")
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--codes", "x.npy", "--out", "y.npy"}, true, "required"},
		{[]string{"--codec", "a", "--codes", "b", "--out", "c", "--window", "-1"}, true, "window"},
		{[]string{"--codec", "a", "--codes", "b", "--out", "c", "--from", "1", "--stages", "."}, true, "whole decode"},
		{[]string{"--codec", filepath.Join(fix, "codec.pth"), "--codes", filepath.Join(fix, "pcm.npy"), "--out", filepath.Join(t.TempDir(), "o.npy")}, false, "want [10, frames]"},
		{[]string{"--codec", filepath.Join(fix, "codes.npy"), "--codes", filepath.Join(fix, "codes.npy"), "--out", "o.npy"}, false, "codes.npy"},
	} {
		err := runDebugDecode(tc.args)
		if err == nil || errors.Is(err, errUsage) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v (usage %v), want %q", tc.args, err, errors.Is(err, errUsage), tc.want)
		}
	}
}

// readNPY reads a .npy file the test needs.
func readNPY(t *testing.T, path string) *checkpoint.Tensor {
	t.Helper()
	tn, err := checkpoint.ReadNPYFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return tn
}

// readF32 reads a .npy file of floats as float32.
func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	v, err := readNPY(t, path).Float32s()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// synth with a reference voice: the same seed and reference give the same
// bytes, and the reference changes the take.
func TestSynthWithReference(t *testing.T) {
	model := demoCheckpoint(t)
	ref := filepath.Join("..", "..", "engine", "audio", "decode", "testdata", "ref.mp3")
	out := t.TempDir()
	take := func(name string, extra ...string) []byte {
		path := filepath.Join(out, name)
		args := append([]string{"--model", model, "--text", "Cloned.", "--seed", "5", "--max-frames", "6", "--out", path}, extra...)
		if err := runSynth(args, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := take("a.wav", "--ref", ref, "--ref-text", "The quick brown fox.")
	b := take("b.wav", "--ref", ref, "--ref-text", "The quick brown fox.")
	if !bytes.Equal(a, b) {
		t.Error("the same seed and reference gave different bytes")
	}
	if bytes.Equal(a, take("c.wav")) {
		t.Error("the reference changed nothing")
	}
	for _, tc := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--ref", ref}, true, "1 --ref files and 0 --ref-text"},
		{[]string{"--ref", filepath.Join(out, "a.wav"), "--ref-text", "x"}, false, "too short"},
		{[]string{"--ref", filepath.Join(out, "none.wav"), "--ref-text", "x"}, false, "none.wav"},
	} {
		args := append([]string{"--model", model, "--text", "Cloned.", "--out", filepath.Join(out, "d.wav")}, tc.args...)
		err := runSynth(args, &bytes.Buffer{})
		if err == nil || errors.Is(err, errUsage) != tc.usage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.args, err, tc.want)
		}
	}
}

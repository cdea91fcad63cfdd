package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// synth --repeat 2 in a reference voice: the second take starts from the
// voice cache (fewer rows prefilled) and makes the same codes; the WAV is
// the last take's, the bytes one take makes. --repeat 0 is a usage error.
func TestSynthRepeatUsesTheVoiceCache(t *testing.T) {
	model := demoCheckpoint(t)
	ref := filepath.Join("..", "..", "engine", "audio", "decode", "testdata", "ref.mp3")
	out := t.TempDir()
	args := func(name string, extra ...string) []string {
		return append([]string{"--model", model, "--text", "Cloned.", "--seed", "5", "--max-frames", "6", "--out", filepath.Join(out, name),
			"--ref", ref, "--ref-text", "The quick brown fox."}, extra...)
	}
	var stdout bytes.Buffer
	if err := synth(args("r.wav", "--repeat", "2", "--json"), streams{in: strings.NewReader(""), out: &stdout, log: &bytes.Buffer{}}); err != nil {
		t.Fatal(err)
	}
	var sum synthSummary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Takes) != 2 {
		t.Fatalf("%d takes in the summary, want 2", len(sum.Takes))
	}
	first, second := sum.Takes[0], sum.Takes[1]
	if first.VoiceCached || first.PrefillRows != first.PromptRows {
		t.Errorf("first take: voice cached %v, %d of %d rows prefilled", first.VoiceCached, first.PrefillRows, first.PromptRows)
	}
	if !second.VoiceCached || second.PrefillRows >= second.PromptRows || second.PromptRows != first.PromptRows {
		t.Errorf("second take: voice cached %v, %d of %d rows prefilled", second.VoiceCached, second.PrefillRows, second.PromptRows)
	}
	if err := runSynth(args("once.wav"), &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	a, errA := os.ReadFile(filepath.Join(out, "r.wav"))
	b, errB := os.ReadFile(filepath.Join(out, "once.wav"))
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Errorf("the repeated take's WAV differs from one take's (%v, %v)", errA, errB)
	}
	if err := runSynth(args("x.wav", "--repeat", "0"), &bytes.Buffer{}); !errors.Is(err, errUsage) {
		t.Errorf("--repeat 0: %v, want a usage error", err)
	}
}

// A --ref that never ends (/dev/zero) is refused at the limit, not read
// until memory runs out; a pipe (--ref <(command)) reads like a file.
func TestReadReferenceCapped(t *testing.T) {
	if _, err := readCapped("/dev/zero", 1000); err == nil || !strings.Contains(err.Error(), "--ref /dev/zero: more than the limit of 1000 bytes") {
		t.Errorf("/dev/zero: %v", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.WriteString("RIFF"); w.Close() }()
	defer r.Close()
	if b, err := readCapped(fmt.Sprintf("/dev/fd/%d", r.Fd()), 1000); err != nil || string(b) != "RIFF" {
		t.Errorf("a pipe: %q, %v", b, err)
	}
}

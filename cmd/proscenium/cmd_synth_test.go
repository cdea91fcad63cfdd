package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"proscenium/engine/audio"
	"proscenium/engine/drama3"
)

// demoCheckpoint writes a make-tiny checkpoint into a temporary directory; it
// needs the base Qwen tokenizer.json from `make deps`.
func demoCheckpoint(t *testing.T) string {
	t.Helper()
	path, err := drama3.FindBaseTokenizer()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("%v (run make deps)", err)
	}
	base, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// synth and debug take on the demo model, each loading the model afresh:
// the same seed gives the same WAV bytes (debug take's PCM written as WAV
// equals synth's file) and the same codes; debug take's tensors have their
// shapes.
func TestSynthAndDebugTake(t *testing.T) {
	model := demoCheckpoint(t)
	out := t.TempDir()
	args := func(extra ...string) []string {
		return append([]string{"--model", model, "--text", "Same seed, same bytes.", "--seed", "5", "--max-frames", "8"}, extra...)
	}
	var log bytes.Buffer
	wavPath := filepath.Join(out, "take.wav")
	if err := runSynth(args("--out", wavPath, "--codes", filepath.Join(out, "codes.npy")), &log); err != nil {
		t.Fatal(err)
	}
	wav, err := os.ReadFile(wavPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := 44 + 8*2048*2; len(wav) != want {
		t.Fatalf("WAV of %d bytes, want %d (8 frames of 16-bit PCM)", len(wav), want)
	}
	if !strings.Contains(log.String(), "8 frames") || !strings.Contains(log.String(), "finish length") {
		t.Errorf("log %q", log.String())
	}

	dbg := filepath.Join(out, "debug")
	if err := runDebugTake(append(args(), "--out", dbg), &log); err != nil {
		t.Fatal(err)
	}
	pcm := readNPY(t, filepath.Join(dbg, "pcm.npy"))
	samples, err := pcm.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	again, err := audio.EncodeWAV(samples, 44100, audio.PCM16)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wav, again) {
		t.Fatal("the same request and seed gave different WAV bytes")
	}
	codesA := readNPY(t, filepath.Join(out, "codes.npy"))
	codesD := readNPY(t, filepath.Join(dbg, "codes.npy"))
	if !reflect.DeepEqual(codesA.Shape, []int{10, 8}) || !bytes.Equal(codesA.Data, codesD.Data) {
		t.Fatalf("codes %v differ from debug take's %v", codesA.Shape, codesD.Shape)
	}
	cfg, err := drama3.LoadConfig(model)
	if err != nil {
		t.Fatal(err)
	}
	D := cfg.Text.HiddenSize
	for name, shape := range map[string][]int{
		"logits.0.npy":        {8, 4097},
		"logits.9.npy":        {8, 1024},
		"tower_layer.0.npy":   {8, D},
		"tower_layer.12.npy":  {8, D},
		"feedback_row.npy":    {7, D},
		"backbone_hidden.npy": {7, D},
	} {
		tn := readNPY(t, filepath.Join(dbg, name))
		if !reflect.DeepEqual(tn.Shape, shape) {
			t.Errorf("%s: shape %v, want %v", name, tn.Shape, shape)
		}
	}
	ph := readNPY(t, filepath.Join(dbg, "prefill_hidden.npy"))
	if len(ph.Shape) != 2 || ph.Shape[1] != D || ph.Shape[0] < 10 {
		t.Errorf("prefill_hidden shape %v", ph.Shape)
	}
	if _, err := os.Stat(filepath.Join(dbg, "take.json")); err != nil {
		t.Error(err)
	}
}

func TestSynthUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--model", "m", "--text", "t"},
		{"--model", "m", "--out", "x.wav"},
		{"--model", "m", "--text", "t", "--out", "x.wav", "--max-frames", "0"},
		{"--model", "m", "--text", "t", "--out", "x.wav", "extra"},
		{"--model", "m", "--text", "t", "--out", "x.wav", "--format", "mp3"},
	} {
		if err := runSynth(args, &bytes.Buffer{}); !errors.Is(err, errUsage) {
			t.Errorf("synth %q: error %v, want a usage error", args, err)
		}
	}
}

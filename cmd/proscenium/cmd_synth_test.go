package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
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
	tensor := readNPY(t, filepath.Join(dbg, "pcm.npy"))
	samples, err := tensor.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	again, err := pcm.EncodeWAV(samples, 44100, pcm.PCM16)
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
	for _, c := range []struct {
		args []string
		says string
	}{
		{nil, "--model is required"},
		{[]string{"--text", "t", "--out", "x.wav"}, "--model is required"},
		{[]string{"--model", "m", "--text", "t"}, "--out"},
		{[]string{"--model", "m", "--out", "x.wav"}, "one of --text or --text-file is required"},
		{[]string{"--model", "m", "--text", "", "--out", "x.wav"}, "--text is empty"},
		{[]string{"--model", "m", "--text-file", "", "--out", "x.wav"}, "--text-file is empty"},
		{[]string{"--model", "m", "--text", "t", "--text-file", "f", "--out", "x.wav"}, "not both"},
		{[]string{"--model", "m", "--text", "t", "--out", "x.wav", "--max-frames", "0"}, "--max-frames 0"},
		{[]string{"--model", "m", "--text", "t", "--out", "x.wav", "extra"}, "extra"},
		{[]string{"--model", "m", "--text", "t", "--out", "x.wav", "--format", "mp3"}, "mp3"},
	} {
		err := runSynth(c.args, &bytes.Buffer{})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("synth %q: error %v, want a usage error saying %q", c.args, err, c.says)
		}
	}
}

// Item 8: a bad --out (a directory, a missing folder) fails before the
// model is even opened, so no take is made only to be lost.
func TestSynthChecksTheOutputFirst(t *testing.T) {
	dir := t.TempDir()
	absent := filepath.Join(t.TempDir(), "absent-model") // opening it would fail: the check must come first
	for _, c := range []struct{ out, codes, says string }{
		{dir, "", "is a directory"},
		{filepath.Join(dir, "missing", "x.wav"), "", "does not exist"},
		{filepath.Join(dir, "x.wav"), filepath.Join(dir, "no", "codes.npy"), "--codes"},
	} {
		args := []string{"--model", absent, "--text", "Hi.", "--out", c.out}
		if c.codes != "" {
			args = append(args, "--codes", c.codes)
		}
		err := runSynth(args, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "absent-model") {
			t.Errorf("synth --out %s --codes %q: %v, want an error saying %q before the model is opened", c.out, c.codes, err, c.says)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the checks left files behind: %v", entries)
	}
}

// Item 8: Ctrl-C keeps the partial take and exits 130.
func TestSynthInterruptedKeepsThePartialTake(t *testing.T) {
	model := demoCheckpoint(t)
	// A signal that arrives outside the take never ends the test process:
	// TestMain holds SIGINT.
	out := filepath.Join(t.TempDir(), "take.wav")
	// Interrupt only once audio exists: a signal during the prefill would
	// (rightly) keep an empty take, which is not what this test is about.
	audio := make(chan struct{})
	var once sync.Once
	takeEventHook = func(ev api.Event) {
		if ev.Kind == api.EventAudio {
			once.Do(func() { close(audio) })
		}
	}
	defer func() { takeEventHook = nil }()
	done := make(chan error, 1)
	go func() {
		done <- runSynth([]string{"--model", model, "--text", "A long take, cut short.", "--max-frames", "60000", "--out", out}, &bytes.Buffer{})
	}()
	var err error
	select {
	case <-audio:
	case err = <-done:
		t.Fatalf("synth ended before any audio: %v", err)
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			syscall.Kill(os.Getpid(), syscall.SIGINT)
		}
	}
	if !errors.Is(err, errInterrupted) || !strings.Contains(err.Error(), out) {
		t.Fatalf("interrupted synth: %v, want errInterrupted naming %s", err, out)
	}
	wav, rerr := os.ReadFile(out)
	if rerr != nil || len(wav) <= 44 || len(wav) >= 44+60000*2048*2 || (len(wav)-44)%(2048*2) != 0 {
		t.Fatalf("partial take: %d bytes, %v", len(wav), rerr)
	}
}

// The text from stdin is read up to its limit and refused past it; at the
// limit it is taken whole.
func TestReadTextLimit(t *testing.T) {
	if _, err := readText("-", "", strings.NewReader(strings.Repeat("a", maxTextBytes+1))); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("over the limit: %v", err)
	}
	if got, err := readText("-", "", strings.NewReader(strings.Repeat("a", maxTextBytes))); err != nil || len(got) != maxTextBytes {
		t.Errorf("at the limit: %d bytes, %v", len(got), err)
	}
}

// TestSynthLexicon: --lexicon (here a settings file, as the studio keeps
// it) gives the engine the text with the pronunciations applied: the WAV
// is byte for byte the take of the spoken text, and --json says what was
// spoken. A lexicon the studio would refuse is refused by name before any
// take, and nothing is written.
func TestSynthLexicon(t *testing.T) {
	model := demoCheckpoint(t)
	dir := t.TempDir()
	lex := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(lex, []byte(`{"seed": 3, "lexicon": [{"written": "SQL", "spoken": "sequel"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	take := func(text, out string, extra ...string) (synthSummary, []byte) {
		t.Helper()
		var stdout bytes.Buffer
		args := append([]string{"--model", model, "--text", text, "--seed", "5", "--max-frames", "6", "--json", "--out", out}, extra...)
		if err := synth(args, streams{in: strings.NewReader(""), out: &stdout, log: &bytes.Buffer{}}); err != nil {
			t.Fatal(err)
		}
		var sum synthSummary
		if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
			t.Fatal(err)
		}
		wav, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return sum, wav
	}
	sum, withLexicon := take("Ask SQL, not SQLite.", filepath.Join(dir, "a.wav"), "--lexicon", lex)
	plain, spoken := take("Ask sequel, not SQLite.", filepath.Join(dir, "b.wav"))
	if sum.Spoken != "Ask sequel, not SQLite." || plain.Spoken != "" {
		t.Errorf("spoken %q (without a lexicon %q)", sum.Spoken, plain.Spoken)
	}
	if !bytes.Equal(withLexicon, spoken) {
		t.Error("the take with the lexicon is not the take of the spoken text")
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"written": "[calm]", "spoken": "x"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "c.wav")
	for _, path := range []string{bad, filepath.Join(dir, "missing.json")} {
		err := runSynth([]string{"--model", model, "--text", "t", "--out", out, "--lexicon", path}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "--lexicon") || !strings.Contains(err.Error(), path) {
			t.Errorf("--lexicon %s: %v, want an error naming the flag and the file", path, err)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused lexicon left %s: %v", out, err)
	}
}

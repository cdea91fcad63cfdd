package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"proscenium/engine/audio/decode"
	"strings"
	"testing"

	"proscenium/app/settings"
	"proscenium/app/speechapi"
	"proscenium/engine/api"
)

// TestMain runs main itself when asked (PROSCENIUM_TEST_MAIN=1), so the
// tests below see the real exit statuses and streams of the command line.
func TestMain(m *testing.M) {
	decode.ServeWorkerIfAsked()                       // the test binary decodes uploads as the program does
	if backends, ok := os.LookupEnv(fakeGPUEnv); ok { // cmd_worker_test.go
		os.Exit(fakeGPUWorker(backends))
	}
	// The worker argument too: --isolate starts this executable as
	// `proscenium worker`, as the real program does (cmd_worker_test.go).
	if os.Getenv("PROSCENIUM_TEST_MAIN") == "1" || len(os.Args) > 1 && os.Args[1] == "worker" {
		main()
		os.Exit(0)
	}
	// The test binary is also the engine worker of synth --isolate's tests
	// (they start this executable as `proscenium worker`).
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		if err := runWorker(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "proscenium worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Tests send SIGINT to this process (serve's and synth's Ctrl-C). The
	// kernel may hand one to a thread after the test that sent it stopped
	// listening, and with no listener left Go's default action ends the
	// whole test binary ("signal: interrupt", seen in CI under -race). Held
	// here for the binary's life, a late one is dropped; the children that
	// run main above keep the default.
	signal.Notify(make(chan os.Signal, 1), os.Interrupt)
	os.Exit(m.Run())
}

// proscenium runs the command line with args and returns stdout, stderr and
// the exit status.
func proscenium(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PROSCENIUM_TEST_MAIN=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// -h prints the help to stdout and exits 0, for every command and every
// command of the nested tables; a wrong flag exits 2 with the usage on stderr.
func TestHelpEverywhere(t *testing.T) {
	lines := [][]string{{"-h"}, {"--help"}, {"help"}}
	for name := range commands {
		lines = append(lines, []string{name, "-h"}, []string{name, "--help"})
	}
	for _, nested := range []struct {
		name  string
		table map[string]command
	}{{"debug", debugCommands}, {"bench", benchCommands}, {"gpu", gpuCommands}} {
		for name := range nested.table {
			lines = append(lines, []string{nested.name, name, "-h"})
		}
	}
	for _, args := range lines {
		out, errOut, code := proscenium(t, args...)
		if code != 0 || !strings.Contains(strings.ToLower(out), "usage") || errOut != "" {
			t.Errorf("proscenium %s: exit %d, stdout %q, stderr %q; want the usage on stdout and exit 0", strings.Join(args, " "), code, out, errOut)
		}
	}
	for _, args := range [][]string{{"serve", "--bogus"}, {"gpu", "probe", "--bogus"}, {"synth", "--bogus"}, {"bench", "tower", "--bogus"}, {"nonsense"}, {}} {
		out, errOut, code := proscenium(t, args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "usage") {
			t.Errorf("proscenium %s: exit %d, stdout %q, stderr %q; want exit 2 with the usage on stderr", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// Float defaults print as written, not as the float32's exact value.
func TestHelpShowsCleanDefaults(t *testing.T) {
	out, _, _ := proscenium(t, "synth", "-h")
	if !strings.Contains(out, "(default 0.9)") || strings.Contains(out, "0.89999") {
		t.Errorf("synth -h shows top-p's default as:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, _, code := proscenium(t, args...)
		if code != 0 || !strings.HasPrefix(out, "proscenium unstamped (") {
			t.Errorf("proscenium %s: exit %d, %q", args[0], code, out)
		}
	}
	version = "1.2.3"
	defer func() { version = "" }()
	if v := versionLine(); !strings.HasPrefix(v, "proscenium 1.2.3 (") {
		t.Errorf("stamped version line %q", v)
	}
}

// One default frame limit: the CLI's flag, the studio's settings, the API's.
func TestOneDefaultMaxFrames(t *testing.T) {
	fs := newFlags("synth")
	addTakeFlags(fs)
	cli := fs.Lookup("max-frames").DefValue
	if cli != "2048" || settings.Default().MaxFrames != api.DefaultMaxFrames ||
		speechapi.DefaultLimits().DefaultMaxFrames != api.DefaultMaxFrames || api.DefaultMaxFrames != 2048 {
		t.Errorf("max frames: CLI %s, settings %d, API %d, engine %d", cli, settings.Default().MaxFrames,
			speechapi.DefaultLimits().DefaultMaxFrames, api.DefaultMaxFrames)
	}
}

// synth reads the text from stdin or a file, writes the WAV to stdout, prints
// JSON, shows progress only on a terminal and not with --quiet.
func TestSynthStreamsAndProgress(t *testing.T) {
	model := demoCheckpoint(t)
	dir := t.TempDir()
	common := []string{"--model", model, "--seed", "3", "--max-frames", "6"}
	run := func(stdin string, terminal bool, args ...string) (string, string, error) {
		var out, log bytes.Buffer
		err := synth(append(append([]string{}, common...), args...), streams{in: strings.NewReader(stdin), out: &out, log: &log, terminal: terminal})
		return out.String(), log.String(), err
	}
	var sink bytes.Buffer
	if err := synth(append(append([]string{}, common...), "--text", "Hi.", "--out", "-"), streams{in: strings.NewReader(""), out: &sink, log: &sink, outTerminal: true}); !errors.Is(err, errUsage) || sink.Len() != 0 {
		t.Errorf("--out - to a terminal: %v, wrote %d bytes", err, sink.Len())
	}
	ref := filepath.Join(dir, "ref.wav")
	if _, _, err := run("", false, "--text", "Hello there.", "--out", ref); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(ref)

	wav, log, err := run("  Hello there.\n", true, "--text", "-", "--out", "-")
	if err != nil || wav != string(want) {
		t.Fatalf("--text - --out -: %v, %d bytes, want the %d bytes of --text", err, len(wav), len(want))
	}
	if !strings.Contains(log, "frame 6 of at most 6") || !strings.Contains(log, "real-time factor") || !strings.Contains(log, "\r") {
		t.Errorf("progress on a terminal: %q", log)
	}
	textFile := filepath.Join(dir, "text.txt")
	os.WriteFile(textFile, []byte("Hello there."), 0o644)
	js, log, err := run("", true, "--text-file", textFile, "--out", filepath.Join(dir, "f.wav"), "--json", "--quiet")
	if err != nil || log != "" {
		t.Fatalf("--text-file --json --quiet: %v, log %q", err, log)
	}
	var sum synthSummary
	if err := json.Unmarshal([]byte(js), &sum); err != nil || sum.Finish == nil || sum.Finish.Frames != 6 || !sum.Demo {
		t.Fatalf("--json printed %q (%v)", js, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "f.wav")); !bytes.Equal(got, want) {
		t.Error("--text-file made a different take than --text")
	}
	if _, log, err = run("", false, "--text", "Hello there.", "--out", filepath.Join(dir, "g.wav")); err != nil || strings.Contains(log, "\r") || !strings.Contains(log, "6 frames") {
		t.Errorf("not a terminal: %v, log %q (want the summary line only)", err, log)
	}

	for _, c := range []struct {
		stdin string
		args  []string
		says  string
		usage bool
	}{
		{"", []string{"--text", "a", "--text-file", textFile, "--out", "x.wav"}, "--text-file", true},
		{"", []string{"--text", "a", "--out", "-", "--json"}, "stdout", true},
		{" \n", []string{"--text", "-", "--out", "x.wav"}, "empty", true},
		{"\xff\xfe", []string{"--text", "-", "--out", "x.wav"}, "UTF-8", false},
		{"", []string{"--text-file", filepath.Join(dir, "absent.txt"), "--out", "x.wav"}, "absent.txt", false},
	} {
		_, _, err := run(c.stdin, false, c.args...)
		if err == nil || errors.Is(err, errUsage) != c.usage || !strings.Contains(err.Error(), c.says) {
			t.Errorf("synth %q: %v, want an error saying %q (usage %v)", c.args, err, c.says, c.usage)
		}
	}
}

// --model OWNER/NAME loads the snapshot refs/main names in the Hugging Face
// cache ($HF_HOME), offline; one with a shard missing is refused by name.
func TestSynthModelByName(t *testing.T) {
	model := demoCheckpoint(t)
	hf := t.TempDir()
	t.Setenv("HF_HOME", hf)
	t.Setenv("HF_HUB_CACHE", "")
	repo := filepath.Join(hf, "hub", "models--fishaudio--drama-3")
	os.MkdirAll(filepath.Join(repo, "snapshots"), 0o755)
	os.MkdirAll(filepath.Join(repo, "refs"), 0o755)
	snap := filepath.Join(repo, "snapshots", "0123abcd")
	if err := os.Rename(model, snap); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "refs", "main"), []byte("0123abcd"), 0o644)
	var out, log bytes.Buffer
	args := []string{"--model", "fishaudio/drama-3", "--text", "Hi.", "--max-frames", "2", "--out", filepath.Join(t.TempDir(), "a.wav"), "--json"}
	if err := synth(args, streams{in: strings.NewReader(""), out: &out, log: &log}); err != nil {
		t.Fatalf("--model fishaudio/drama-3: %v", err)
	}
	shards, _ := filepath.Glob(filepath.Join(snap, "model-*.safetensors"))
	if len(shards) == 0 {
		t.Fatal("the demo checkpoint has no shards")
	}
	os.Remove(shards[len(shards)-1])
	err := synth(args, streams{in: strings.NewReader(""), out: &out, log: &log})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(shards[len(shards)-1])) || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("a shard missing: %v", err)
	}
}

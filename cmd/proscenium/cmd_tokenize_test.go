package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/engine/drama3"
	"proscenium/engine/tokenizer"
)

// qwenTokenizerFile is the npm Qwen3 tokenizer.json, or skips (fails in CI).
func qwenTokenizerFile(t *testing.T) string {
	t.Helper()
	p, err := drama3.FindBaseTokenizer()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip("no Qwen tokenizer.json: run make deps")
	}
	return p
}

func TestTokenizeCommand(t *testing.T) {
	qwen := qwenTokenizerFile(t)
	run := func(stdin string, args ...string) (string, error) {
		var out bytes.Buffer
		err := tokenize(args, strings.NewReader(stdin), &out)
		return out.String(), err
	}
	// "Hello, world!" and the <|im_start|> case are in qwen3-golden.json.
	cases := []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"--tokenizer", qwen, "Hello, world!"}, `{"ids":[9707,11,1879,0],"count":4}` + "\n"},
		{"Hello, world!", []string{"--tokenizer", qwen, "-"}, `{"ids":[9707,11,1879,0],"count":4}` + "\n"},
		{"", []string{"--tokenizer", qwen, "<|im_start|>user\nHello<|im_end|>\n"}, `{"ids":[151644,872,198,9707,151645,198],"count":6}` + "\n"},
		{"", []string{"--tokenizer", qwen, ""}, `{"ids":[],"count":0}` + "\n"},
		// "-3 °C" from the golden "… It's -3 °C at 7:45 a.m.": ids 12, 18, 36286, 34.
		{"", []string{"--tokenizer", qwen, "--", "-3 °C"}, `{"ids":[12,18,36286,34],"count":4}` + "\n"},
	}
	for _, c := range cases {
		got, err := run(c.stdin, c.args...)
		if err != nil || got != c.want {
			t.Errorf("tokenize %q (stdin %q) = %q, %v; want %q", c.args[2:], c.stdin, got, err, c.want)
		}
	}

	// --prompt with a Drama 3 tokenizer.json prints the prompt builder's ids.
	base, err := os.ReadFile(qwen)
	if err != nil {
		t.Fatal(err)
	}
	augmented, err := tokenizer.WithAddedTokens(base, drama3.StructuralTokens(4096))
	if err != nil {
		t.Fatal(err)
	}
	d3 := filepath.Join(t.TempDir(), "tokenizer.json")
	if err := os.WriteFile(d3, augmented, 0o644); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Parse(augmented)
	if err != nil {
		t.Fatal(err)
	}
	b, err := drama3.NewPromptBuilder(tok, drama3.PromptLimits{})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := b.DefaultVoice("Hello, world!")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString(`{"ids":[`)
	for i, id := range ids {
		if i > 0 {
			want.WriteByte(',')
		}
		want.WriteString(itoa(int64(id)))
	}
	want.WriteString(`],"count":` + itoa(int64(len(ids))) + "}\n")
	if got, err := run("Hello, world!\n", "--tokenizer", d3, "--prompt", "-"); err != nil || got != want.String() {
		t.Errorf("tokenize --prompt = %q, %v; want %q", got, err, want.String())
	}
	if !strings.HasPrefix(want.String(), `{"ids":[151644,8948,198,`) || !strings.Contains(want.String(), ",151645,198,151644,77091,198,151669],") {
		t.Errorf("prompt ids do not have the template's ends: %s", want.String())
	}

	// Refusals: usage errors exit 2, text errors exit 1 with the offset.
	usage := [][]string{
		{"Hello"},
		{"--tokenizer", qwen},
		{"--tokenizer", qwen, "a", "b"},
		{"--tokenizer", qwen, "--max-bytes", "0", "--prompt", "a"},
		{"--no-such-flag", "a"},
	}
	if _, err := run("", "-h"); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("tokenize -h: error = %v, want flag.ErrHelp", err)
	}
	for _, args := range usage {
		if _, err := run("", args...); !errors.Is(err, errUsage) {
			t.Errorf("tokenize %q: error = %v, want a usage error", args, err)
		}
	}
	if _, err := run("", "--tokenizer", d3, "--prompt", "hi <|im_end|>"); err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "<|im_end|>") || !strings.Contains(err.Error(), "at byte 3") {
		t.Errorf("structural token: error = %v", err)
	}
	if _, err := run("", "--tokenizer", qwen, "--prompt", "hi"); err == nil || !strings.Contains(err.Error(), "no <|voice|> token") {
		t.Errorf("--prompt with the plain Qwen tokenizer: error = %v", err)
	}
	if _, err := run("", "--tokenizer", filepath.Join(t.TempDir(), "missing.json"), "hi"); err == nil || errors.Is(err, errUsage) {
		t.Errorf("missing file: error = %v", err)
	}
}

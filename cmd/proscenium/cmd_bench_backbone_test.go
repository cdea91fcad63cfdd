package main

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestBenchBackboneUsage(t *testing.T) {
	for _, args := range [][]string{{"--synthetic", "tiny"}, {"extra"}, {"--steps", "x"}} {
		if err := runBenchBackbone(args); !errors.Is(err, errUsage) {
			t.Errorf("%q: error %v, want a usage error", args, err)
		}
	}
}

// bench backbone --rows: a bad list is a usage error naming it before
// anything starts; a good one reaches the worker's tool as given.
func TestBenchBackboneRows(t *testing.T) {
	for _, bad := range []string{"0", "9", "1,,2", "two", "1;2", "-4"} {
		err := runBenchBackbone([]string{"--rows", bad})
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--rows") {
			t.Errorf("--rows %q: %v; want a usage error naming --rows", bad, err)
		}
	}
	if runtime.GOOS == "windows" {
		t.Skip("shell-script worker")
	}
	dir := t.TempDir()
	worker, seen := filepath.Join(dir, "worker"), filepath.Join(dir, "args")
	if err := os.WriteFile(worker, []byte("#!/bin/sh\necho \"$@\" > "+seen+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := runBenchBackbone([]string{"-worker", worker, "--rows", "1, 2,4,8"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), "--rows 1, 2,4,8") {
		t.Errorf("worker ran with %q, want --rows 1, 2,4,8", strings.TrimSpace(string(got)))
	}
}

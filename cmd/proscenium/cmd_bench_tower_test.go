package main

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestBenchTowerFlags(t *testing.T) {
	for _, args := range [][]string{{"-synthetic", "huge"}, {"-frames", "0"}, {"-prefill", "-1"}, {"extra"}} {
		if err := runBenchTower(args); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if runtime.GOOS == "windows" {
		t.Skip("shell-script worker")
	}
	// The worker gets the tool's name and the flags in its own spelling.
	dir := t.TempDir()
	worker, seen := filepath.Join(dir, "worker"), filepath.Join(dir, "args")
	if err := os.WriteFile(worker, []byte("#!/bin/sh\necho \"$@\" > "+seen+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := runBenchTower([]string{"-worker", worker, "--synthetic", "demo", "--frames", "7", "--json"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	if want := "bench-tower -synthetic demo -prefill=60 -frames=7 -json -numerics fast"; strings.TrimSpace(string(got)) != want {
		t.Fatalf("worker ran with %q, want %q", strings.TrimSpace(string(got)), want)
	}
}

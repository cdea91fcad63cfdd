package main

import (
	"errors"
	"testing"
)

func TestBenchTowerFlags(t *testing.T) {
	for _, args := range [][]string{{"-synthetic", "huge"}, {"-frames", "0"}, {"-prefill", "-1"}, {"extra"}} {
		if err := runBenchTower(args); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	// The worker gets the tool's name and the flags in its own spelling.
	worker, args := recordingWorker(t)
	if err := runBenchTower([]string{"-worker", worker, "--synthetic", "demo", "--frames", "7", "--json"}); err != nil {
		t.Fatal(err)
	}
	if got, want := args(), "bench-tower -synthetic demo -prefill=60 -frames=7 -json -numerics fast"; got != want {
		t.Fatalf("worker ran with %q, want %q", got, want)
	}
}

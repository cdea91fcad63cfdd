package main

import (
	"errors"
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
	worker, args := recordingWorker(t)
	if err := runBenchBackbone([]string{"-worker", worker, "--rows", "1, 2,4,8"}); err != nil {
		t.Fatal(err)
	}
	if got := args(); !strings.Contains(got, "--rows 1, 2,4,8") {
		t.Errorf("worker ran with %q, want --rows 1, 2,4,8", got)
	}
}

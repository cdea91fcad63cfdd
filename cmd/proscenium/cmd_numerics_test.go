package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Every command that runs the GPU backbone takes --numerics fast|exact and
// refuses any other value as a usage error naming the value and the choices,
// before it opens anything.
func TestNumericsFlagRefusesAWrongValue(t *testing.T) {
	discard := func(run func([]string, *bytes.Buffer) error) func([]string) error {
		return func(args []string) error { return run(args, &bytes.Buffer{}) }
	}
	commands := map[string]func([]string) error{
		"synth":          discard(func(a []string, w *bytes.Buffer) error { return runSynth(a, w) }),
		"serve":          runServe,
		"bench backbone": runBenchBackbone,
		"bench tower":    runBenchTower,
		"bench take":     runBenchTake,
		"debug backbone": runDebugBackbone,
		"debug take":     discard(func(a []string, w *bytes.Buffer) error { return runDebugTake(a, w) }),
	}
	for name, run := range commands {
		for _, bad := range []string{"fastest", "EXACT", "f64", ""} {
			err := run([]string{"--numerics", bad})
			if bad == "" {
				// "" is the default (fast): not refused as a numerics value.
				if err != nil && strings.Contains(err.Error(), "numerics") {
					t.Errorf("%s --numerics \"\": %v", name, err)
				}
				continue
			}
			if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), `"`+bad+`"`) || !strings.Contains(err.Error(), "fast") || !strings.Contains(err.Error(), "exact") {
				t.Errorf("%s --numerics %q: %v; want a usage error naming the value, fast and exact", name, bad, err)
			}
		}
	}
}

// The benchmarks hand the policy to the worker's tool in its own spelling.
func TestNumericsFlagReachesTheWorker(t *testing.T) {
	worker, seen := recordingWorker(t)
	for name, run := range map[string]func([]string) error{"bench backbone": runBenchBackbone, "bench tower": runBenchTower, "bench take": runBenchTake} {
		args := []string{"-worker", worker, "--numerics", "exact"}
		if name == "bench take" {
			args = append(args, "--synthetic", "full")
		}
		if err := run(args); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := seen(); !strings.HasSuffix(got, "-numerics exact") {
			t.Errorf("%s: worker ran with %q, want -numerics exact", name, got)
		}
	}
}

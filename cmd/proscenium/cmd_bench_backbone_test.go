package main

import (
	"errors"
	"testing"
)

func TestBenchBackboneUsage(t *testing.T) {
	for _, args := range [][]string{{"--synthetic", "tiny"}, {"extra"}, {"--steps", "x"}} {
		if err := runBenchBackbone(args); !errors.Is(err, errUsage) {
			t.Errorf("%q: error %v, want a usage error", args, err)
		}
	}
}

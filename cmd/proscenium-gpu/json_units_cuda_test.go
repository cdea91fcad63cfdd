//go:build cuda

package main

import (
	"testing"

	"proscenium/engine/cuda/device"
	"proscenium/internal/jsonunits"
)

// TestBenchJSONSaysItsUnits walks the reports `bench * --json` prints
// (cmd/proscenium's TestJSONSaysItsUnits walks the rest): a time.Duration,
// or a number whose name says no unit and is not a count, fails it.
func TestBenchJSONSaysItsUnits(t *testing.T) {
	for _, p := range jsonunits.Check(nil, takeBench{}, codecBenchResult{}, backboneBench{}, TowerBench{}, device.DeviceInfo{}) {
		t.Error(p)
	}
}

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
	// -near-ties' finding names a take, a codebook and two codes (indices)
	// and a difference of two logits (log-probabilities: no unit); its
	// routing parting a layer and a prompt row (indices) and differences of
	// router logits.
	allow := []string{"nearTieTake.take", "nearTieTake.codebook", "nearTieTake.alone_code", "nearTieTake.batched_code", "nearTieTake.logit_gap",
		"routeParting.layer", "routeParting.prompt_row", "routeParting.router_logit_margin", "routeParting.router_logits_diff",
		// A count of frames, a seed (named as its flag, -seed-base), real-time
		// factors (ratios), and a CUDA stream priority (a setting).
		"takeBench.frames_ahead", "takeBench.seed_base", "takeBench.take_real_time_factors", "DeviceInfo.stream_priority"}
	for _, p := range jsonunits.Check(allow, takeBench{}, codecBenchResult{}, backboneBench{}, TowerBench{}, device.DeviceInfo{}) {
		t.Error(p)
	}
}

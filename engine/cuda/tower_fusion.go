package cuda

import "fmt"

// towerFusion says which of a frame's alternative launch sequences a Tower
// enqueues (kernels/tower.cu). Each computes the same values (TestTowerFrames
// runs each against engine/cpu); they differ in launches and speed
// (docs/PERF.md, "GPU tower and sampler": the default measured 0.015 ms a
// frame faster; the register-held norms and the GEMVs that did the norm
// after them in their last block, measured beside them and slower, were
// removed: 22c6bf8).
type towerFusion struct {
	// gateUp: one GEMV launch writes silu(W1·x)·(W3·x) (tower_gate_up_swiglu)
	// where the two-matrix GEMV and swiglu_f32 took two.
	gateUp bool
}

// defaultTowerFusion is a frame's sequence unless PROSCENIUM_GPU_TOWER names
// another.
var defaultTowerFusion = towerFusion{gateUp: true}

// towerFusionVariants are the sequences the benchmark times and the device
// test checks.
var towerFusionVariants = []towerFusion{{}, {gateUp: true}}

// String names the sequence as parseTowerFusion reads it.
func (f towerFusion) String() string {
	if f.gateUp {
		return "gateup"
	}
	return "plain"
}

// parseTowerFusion reads a PROSCENIUM_GPU_TOWER value: "" for the default,
// "plain" (gate·up GEMV, then swiglu_f32) or "gateup".
func parseTowerFusion(s string) (towerFusion, error) {
	switch s {
	case "":
		return defaultTowerFusion, nil
	case "plain":
		return towerFusion{}, nil
	case "gateup":
		return towerFusion{gateUp: true}, nil
	}
	return towerFusion{}, fmt.Errorf("PROSCENIUM_GPU_TOWER=%q: want plain or gateup", s)
}

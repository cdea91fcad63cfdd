package cuda

import (
	"fmt"
	"strings"
)

// towerFusion says which of a frame's alternative launch sequences a Tower
// enqueues (kernels/tower.cu). Every combination computes the same values
// (TestTowerFrames runs each against engine/cpu); they differ in launches
// and speed (docs/PERF.md, "GPU tower and sampler").
type towerFusion struct {
	// regNorms: the one-row norm launches hold the row in registers
	// (tower_add_rmsnorm_regs, tower_out_eh_regs) instead of strided loops.
	regNorms bool
	// gateUp: one GEMV launch writes silu(W1·x)·(W3·x) (tower_gate_up_swiglu),
	// no swiglu_f32 launch.
	gateUp bool
	// gemvNorm: eh_proj and wo (and the last layer's w2) end with the norm
	// after them in their launch's last block (tower_gemv_add_rmsnorm), no
	// tower_add_rmsnorm launches.
	gemvNorm bool
	// gemvOutEh: w2 ends with the out norm and the next layer's eh_proj
	// input in its last block (tower_gemv_out_eh), no tower_out_eh launches.
	gemvOutEh bool
}

// defaultTowerFusion is a frame's sequence unless PROSCENIUM_GPU_TOWER names
// another.
var defaultTowerFusion = towerFusion{gateUp: true, gemvNorm: true, gemvOutEh: true}

// towerFusionVariants are the sequences the benchmark times and the device
// test checks.
var towerFusionVariants = []towerFusion{
	{}, {regNorms: true}, {gateUp: true}, {gateUp: true, regNorms: true}, {gateUp: true, gemvNorm: true},
	{gateUp: true, gemvOutEh: true}, {gateUp: true, gemvNorm: true, gemvOutEh: true},
}

// String names the sequence as parseTowerFusion reads it: its parts joined
// by "+", or "plain".
func (f towerFusion) String() string {
	var parts []string
	if f.regNorms {
		parts = append(parts, "regnorms")
	}
	if f.gateUp {
		parts = append(parts, "gateup")
	}
	if f.gemvNorm {
		parts = append(parts, "gemvnorm")
	}
	if f.gemvOutEh {
		parts = append(parts, "gemvouteh")
	}
	if len(parts) == 0 {
		return "plain"
	}
	return strings.Join(parts, "+")
}

// parseTowerFusion reads a PROSCENIUM_GPU_TOWER value: "" for the default,
// "plain", or parts among regnorms, gateup, gemvnorm and gemvouteh joined
// by "+".
func parseTowerFusion(s string) (towerFusion, error) {
	switch s {
	case "":
		return defaultTowerFusion, nil
	case "plain":
		return towerFusion{}, nil
	}
	var f towerFusion
	for _, p := range strings.Split(s, "+") {
		switch p {
		case "regnorms":
			f.regNorms = true
		case "gateup":
			f.gateUp = true
		case "gemvnorm":
			f.gemvNorm = true
		case "gemvouteh":
			f.gemvOutEh = true
		default:
			return towerFusion{}, fmt.Errorf("PROSCENIUM_GPU_TOWER=%q: %q is not one of plain, regnorms, gateup, gemvnorm, gemvouteh (parts joined by +)", s, p)
		}
	}
	return f, nil
}

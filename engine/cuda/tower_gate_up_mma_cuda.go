//go:build cuda

package cuda

import (
	"fmt"
	"strconv"
)

// towerGateUpMMA says where a B-row tower frame's gate·up runs on the
// tensor cores (kernels/tower.cu tower_gate_up_swiglu_mma_fast: fast
// numerics only, each take's values within float32 rounding of its values
// alone rather than their bits, docs/MODEL.md). The SIMT B-row gate·up
// reads each weight once for every row but its sums grow with the rows; the
// tensor cores' cost hardly does: the four takes' tower frame 1.106 → 0.975
// ms, eight 1.997 → 1.390, two 0.848 → 0.825 (docs/PERF.md "gate23").
type towerGateUpMMA struct {
	from     int  // the fewest rows it takes (0: never)
	anyShape bool // tests: also gate·ups too narrow for the rule below
}

// defaultTowerGateUpMMAFrom is towerGateUpMMA.from unless
// $PROSCENIUM_GPU_TOWER_GATEUP_MMA says otherwise.
const defaultTowerGateUpMMAFrom = 2

// parseTowerGateUpMMA reads $PROSCENIUM_GPU_TOWER_GATEUP_MMA (benchmarks):
// "" the default, "0" never, 2…8 from that many rows.
func parseTowerGateUpMMA(s string) (towerGateUpMMA, error) {
	if s == "" {
		return towerGateUpMMA{from: defaultTowerGateUpMMAFrom}, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n != 0 && (n < 2 || n > TowerMaxTakes) {
		return towerGateUpMMA{}, fmt.Errorf("PROSCENIUM_GPU_TOWER_GATEUP_MMA=%q: want 0 (never) or the fewest rows, 2…%d", s, TowerMaxTakes)
	}
	return towerGateUpMMA{from: n}, nil
}

// use says whether the gate·up of an [F, D] pair over n rows runs on the
// tensor cores: under fast numerics, from m.from rows, columns a multiple of
// 32 (the kernel's step), and, as gemvRowsUseMMA's rule for one matrix, 8192
// weight rows or more between the two (the grid is a block per 16 rows of
// each: fewer blocks leave the GPU idle).
func (m towerGateUpMMA) use(F, D, n int, exact bool) bool {
	if exact || m.from == 0 || n < m.from || n > 8 || D%32 != 0 {
		return false
	}
	return m.anyShape || 2*F >= 8192
}

// gateUpRowsOnMMA says whether gateUpRows runs n rows' fused gate·up on the
// tensor cores: t.gateUpMMA's rule, unless a test or benchmark put the B-row
// GEMVs on another instance (SetRowsGemv) or the frame is not fused.
func (t *Tower) gateUpRowsOnMMA(n int, exact bool) bool {
	return t.frameFusion(1).gateUp && t.rowsGemv == nil && t.gateUpMMA.use(t.g.FFN, t.g.Dim, n, exact)
}

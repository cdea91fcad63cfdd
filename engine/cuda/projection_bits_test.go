package cuda

import (
	"fmt"
	"testing"
)

// The projections' bit check (docs/MODEL.md "Numerics contract", rule 1): a
// kernel that sums the CPU's exact float64 products in another order rounds
// to other float32 bits only where the exact sum lies within float64 noise of
// a float32 rounding boundary, so at most one element in projDifferPer may
// differ from engine/cpu, by at most projMaxULP float32 steps.
const projDifferPer, projMaxULP = 10000, 4

// projULPTally sums ULPDiff's figures over several compared outputs.
type projULPTally struct {
	differ, total int
	maxULP        int64
}

func (u *projULPTally) add(differ, total int, maxULP int64) {
	u.differ += differ
	u.total += total
	u.maxULP = max(u.maxULP, maxULP)
}

func (u projULPTally) String() string {
	return fmt.Sprintf("%d/%d differ, maxULP %d", u.differ, u.total, u.maxULP)
}

// checkProjBits compares got with the CPU's want bit for bit, logs
// differ/total and maxULP, and fails beyond the contract's bound.
func checkProjBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	differ, maxULP := ULPDiff(got, want)
	t.Logf("%s: bits against the CPU: %d/%d differ, maxULP %d", what, differ, len(got), maxULP)
	if differ*projDifferPer > len(got) || maxULP > projMaxULP {
		t.Errorf("%s: %d of %d elements differ from the CPU, by up to %d ULP (contract: ≤ 1 in %d, ≤ %d ULP)",
			what, differ, len(got), maxULP, projDifferPer, projMaxULP)
	}
}

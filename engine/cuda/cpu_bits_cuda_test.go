//go:build cuda

package cuda

import "testing"

// checkCPUBits is the numerics contract's device check (docs/MODEL.md
// "Numerics contract", ULPDiff): it logs how many of got's elements differ
// from the CPU's want and by how many float32 steps at most, and fails when
// more than one in 10⁴ differ or any by more than 4 steps (float64 sums in
// different orders round differently only at rare boundary coincidences).
func checkCPUBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	differ, maxULP := ULPDiff(got, want)
	t.Logf("%s: %d/%d differ from the CPU's bits, max %d ULP", what, differ, len(want), maxULP)
	if int64(differ)*10000 > int64(len(want)) || maxULP > 4 {
		t.Errorf("%s: %d/%d elements differ from the CPU's bits (max %d ULP); the contract allows %d, at most 4 ULP",
			what, differ, len(want), maxULP, len(want)/10000)
	}
}

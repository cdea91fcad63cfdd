//go:build cuda

package cuda

import "testing"

// The device tests of the backbone hold it to the numerics policy it runs
// under: exact, the numerics contract (docs/MODEL.md; every value the CPU's
// float32 bits, checkCPUBits), or fast (float32 accumulation: within a
// tolerance of the CPU, checkRows' bounds).

// numericsPolicy names an arithmetic the backbone kernels can run.
type numericsPolicy string

const (
	policyExact numericsPolicy = "exact"
	policyFast  numericsPolicy = "fast"
)

// policyUnderTest is the policy the kernels under test run: the test
// device's (Device.Numerics, issue 27's knob), so the bit assertions follow
// it.
func policyUnderTest() numericsPolicy {
	if dev.Numerics.Exact() {
		return policyExact
	}
	return policyFast
}

// checkBitsUnderExact asserts the CPU's bits (checkCPUBits) when the policy
// under test is exact; under fast it only logs how many values differ (the
// caller asserts the tolerance).
func checkBitsUnderExact(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if p := policyUnderTest(); p != policyExact {
		differ, maxULP := ULPDiff(got, want)
		t.Logf("%s (%s policy): %d/%d differ from the CPU's bits, max %d ULP", what, p, differ, len(want), maxULP)
		return
	}
	checkCPUBits(t, what, got, want)
}

//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"testing"

	"proscenium/engine/drama3"
)

// The tests' numerics switch (docs/MODEL.md "Numerics policy"). The test
// device computes under testNumerics: exact unless PROSCENIUM_TEST_NUMERICS
// says fast, so a whole-model test (TestBackbone…, TestTowerFrames) runs
// under one policy per run of the binary. The kernel tests of the families
// with an instance per policy run both in one run (eachNumerics). Under
// exact a comparison with engine/cpu asserts the CPU's bits (checkCPUBits,
// checkProjBits, checkRows' exact mode); under fast the relative tolerance
// beside it, and the bits are only logged.
func testNumerics() (drama3.Numerics, error) {
	s := os.Getenv("PROSCENIUM_TEST_NUMERICS")
	if s == "" {
		return drama3.NumericsExact, nil
	}
	n, err := drama3.ParseNumerics(s)
	if err != nil {
		return "", fmt.Errorf("PROSCENIUM_TEST_NUMERICS: %w", err)
	}
	return n, nil
}

// eachNumerics runs f as subtests "exact" and "fast" with the test device
// switched to each policy.
func eachNumerics(t *testing.T, f func(t *testing.T)) {
	for _, n := range []drama3.Numerics{drama3.NumericsExact, drama3.NumericsFast} {
		t.Run(string(n), func(t *testing.T) {
			prev := dev.Numerics
			dev.Numerics = n
			defer func() { dev.Numerics = prev }()
			f(t)
		})
	}
}

// checkBitsIfExact is checkCPUBits under exact numerics; under fast it
// logs the bits only (the caller's checkClose holds the tolerance).
func checkBitsIfExact(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if dev.Numerics.Exact() {
		checkCPUBits(t, what, got, want)
		return
	}
	differ, maxULP := ULPDiff(got, want)
	t.Logf("%s (fast numerics): %d/%d differ from the CPU's bits, max %d ULP", what, differ, len(want), maxULP)
}

// checkProjBitsIfExact is checkProjBits under exact numerics, a log under fast.
func checkProjBitsIfExact(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if dev.Numerics.Exact() {
		checkProjBits(t, what, got, want)
		return
	}
	differ, maxULP := ULPDiff(got, want)
	t.Logf("%s (fast numerics): %d/%d differ from the CPU's bits, max %d ULP", what, differ, len(want), maxULP)
}

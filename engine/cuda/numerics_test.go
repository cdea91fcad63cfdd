package cuda

import (
	"testing"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// The policy families' instances follow the device's numerics: Exact only
// under exact, Fast under fast and the zero value (the studio's default).
// Which families have an instance per policy the generated bindings say
// (tools/kernelgen: name and name_fast with one signature).
func TestPolicyOfNumerics(t *testing.T) {
	for n, want := range map[drama3.Numerics]kernel.Policy{drama3.NumericsExact: kernel.Exact, drama3.NumericsFast: kernel.Fast, "": kernel.Fast} {
		if got := policyOf(n); got != want {
			t.Errorf("numerics %q: policy %v, want %v", n, got, want)
		}
	}
}

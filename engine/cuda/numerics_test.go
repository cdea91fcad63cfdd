package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"proscenium/engine/drama3"
)

// The families Go picks by policy (policyKernels) are exactly those the
// kernel sources instantiate once per policy (NUMERICS_KERNEL), so a family
// templated without the Go side knowing, or a Go name with no fast
// instance, fails here without a GPU.
func TestPolicyKernelsMatchTheSources(t *testing.T) {
	files, err := filepath.Glob("../../kernels/*.cu")
	if err == nil && len(files) == 0 && testing.Short() {
		t.Skip("kernels/*.cu not here (a carried test binary runs with -test.short)")
	}
	if err != nil || len(files) == 0 {
		t.Fatalf("kernel sources: %v (%d files)", err, len(files))
	}
	def := regexp.MustCompile(`(?m)^NUMERICS_KERNEL\((\w+),`)
	var inSources []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range def.FindAllSubmatch(b, -1) {
			inSources = append(inSources, string(m[1]))
		}
	}
	slices.Sort(inSources)
	want := slices.Sorted(slices.Values(policyKernels))
	if !slices.Equal(inSources, want) {
		t.Fatalf("NUMERICS_KERNEL families in kernels/*.cu %v, policyKernels %v", inSources, want)
	}
	for _, base := range policyKernels {
		if policyKernel(drama3.NumericsExact, base) != base || policyKernel(drama3.NumericsFast, base) != base+"_fast" ||
			policyKernel("", base) != base+"_fast" {
			t.Errorf("%s: instances %q (exact), %q (fast), %q (zero value)", base, policyKernel(drama3.NumericsExact, base),
				policyKernel(drama3.NumericsFast, base), policyKernel("", base))
		}
	}
}

package device

import "fmt"

// Variant is the compiled form of the kernels a device runs.
type Variant struct {
	SM90a bool   // the sm_90a-only fatbin
	Code  string // what the driver runs: "sm_90a", "sm_86 SASS", "compute_90 PTX (JIT)"
}

// genericSASS are the architectures the generic fatbin holds machine code for
// (kernels/cuda.mk); it also holds compute_90 PTX.
var genericSASS = []int{80, 86, 89, 90}

// ChooseVariant picks the kernels for a device of compute capability
// major.minor, following the driver's rules: SASS runs on devices of the same
// major version and an equal or higher minor; PTX is compiled for any later
// device. haveSM90a says whether the sm_90a fatbin was built.
func ChooseVariant(major, minor int, haveSM90a bool) (Variant, error) {
	cc := major*10 + minor
	if cc == 90 && haveSM90a {
		return Variant{SM90a: true, Code: "sm_90a"}, nil
	}
	best := 0
	for _, a := range genericSASS {
		if a/10 == major && a <= cc {
			best = a
		}
	}
	if best != 0 {
		return Variant{Code: fmt.Sprintf("sm_%d SASS", best)}, nil
	}
	if cc > 90 {
		return Variant{Code: "compute_90 PTX (JIT by the driver)"}, nil
	}
	return Variant{}, fmt.Errorf("compute capability %d.%d is not supported: the kernels need 8.0 (Ampere) or later", major, minor)
}

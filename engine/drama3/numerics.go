package drama3

import "fmt"

// Numerics is how a backend computes the backbone (docs/MODEL.md "Numerics
// policy"): NumericsFast (the default) reads the weights as stored and
// accumulates in float32 in any order; NumericsExact follows the numerics
// contract, bit-identical to engine/cpu. The CPU backend is the contract's
// definition: it computes exactly under either value. The zero value is fast.
type Numerics string

const (
	NumericsFast  Numerics = "fast"
	NumericsExact Numerics = "exact"
)

// ParseNumerics reads a --numerics value: "fast" or "exact" ("" is fast).
func ParseNumerics(s string) (Numerics, error) {
	switch Numerics(s) {
	case "", NumericsFast:
		return NumericsFast, nil
	case NumericsExact:
		return NumericsExact, nil
	}
	return "", fmt.Errorf("numerics %q: want fast (float32 sums, the default) or exact (the CPU's bits)", s)
}

// Exact says n is the contract's arithmetic.
func (n Numerics) Exact() bool { return n == NumericsExact }

// Set parses a --numerics value into n (flag.Value): a wrong value is
// refused with ParseNumerics' error and leaves n as it was.
func (n *Numerics) Set(s string) error {
	v, err := ParseNumerics(s)
	if err != nil {
		return err
	}
	*n = v
	return nil
}

// NumericsUsage is the --numerics flag's help.
const NumericsUsage = "GPU numerics: fast (float32 sums of the stored weights, the default) or exact (bit-identical to the CPU backend, slower); the CPU backend is exact either way"

// String is the policy's name ("fast" for the zero value).
func (n Numerics) String() string {
	if n == "" {
		return string(NumericsFast)
	}
	return string(n)
}

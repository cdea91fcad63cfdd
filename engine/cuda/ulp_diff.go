package cuda

import "math"

// ULPDiff compares two float32 vectors bit for bit, as the backbone's
// numerics contract (docs/MODEL.md "Numerics contract") promises a backend
// following it the CPU's bits: how many elements differ, and the largest
// distance between a pair in float32 steps (units in the last place; +0 and
// −0 are 0 apart). A NaN on either side, or lengths that differ, count as
// math.MaxInt64 apart.
func ULPDiff(got, want []float32) (differ int, maxULP int64) {
	if len(got) != len(want) {
		return max(len(got), len(want)), math.MaxInt64
	}
	for i := range got {
		a, b := got[i], want[i]
		if math.Float32bits(a) == math.Float32bits(b) {
			continue
		}
		differ++
		d := int64(math.MaxInt64)
		if !math.IsNaN(float64(a)) && !math.IsNaN(float64(b)) {
			d = ordered(a) - ordered(b)
			if d < 0 {
				d = -d
			}
		}
		maxULP = max(maxULP, d)
	}
	return differ, maxULP
}

// ordered maps a float32 to an integer whose order and differences are the
// floats' order and distance in float32 steps.
func ordered(f float32) int64 {
	b := int64(math.Float32bits(f))
	if b&0x80000000 != 0 {
		return -(b & 0x7fffffff)
	}
	return b
}

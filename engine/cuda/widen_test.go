package cuda

import (
	"math"
	"math/rand/v2"
	"testing"
)

// scaledBits is f64_scaled_bits of kernels/common.cuh in Go: the float64
// whose high word is (w >> 3, arithmetic) & 0x8fffffff and low word w << 29,
// w's bits moved into place, claimed to equal w·2⁻⁸⁹⁶ for every finite w.
// scaledBitsCUDA is the body it was transcribed from.
func scaledBits(w float32) float64 {
	b := int32(math.Float32bits(w))
	hi := uint32(b>>3) & 0x8fffffff
	lo := uint32(b) << 29
	return math.Float64frombits(uint64(hi)<<32 | uint64(lo))
}

const scaledBitsCUDA = `const int b = __float_as_int(w); return __hiloint2double((b >> 3) & (int)0x8fffffff, b << 29);`

func TestScaledBitsIsTheKernelsBody(t *testing.T) {
	checkTranscribed(t, "common.cuh", "f64_scaled_bits", scaledBitsCUDA)
}

// TestScaledBitsWidening checks the identity the float64 projections rely on
// (common.cuh dot_f64): scaledBits(w)·(x·2⁸⁹⁶) is bit for bit
// float64(w)·float64(x), for weights and inputs of every float32 class
// (zeros, subnormals, normals up to the largest) and both signs, so a fused
// multiply-add of either rounds the same.
func TestScaledBitsWidening(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	special := []float32{0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.Float32frombits(0x007fffff), math.Float32frombits(0x00800000), 1, -1, 0.5, math.MaxFloat32, -math.MaxFloat32}
	var vals []float32
	vals = append(vals, special...)
	for e := uint32(0); e < 255; e++ { // every exponent field, random mantissa and sign
		for i := 0; i < 8; i++ {
			vals = append(vals, math.Float32frombits(r.Uint32()&0x807fffff|e<<23))
		}
	}
	for _, w := range vals {
		if got, want := scaledBits(w), float64(w)*0x1p-896; math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("scaledBits(%g) = %g, want %g", w, got, want)
		}
	}
	for i := 0; i < 200000; i++ {
		w, x := vals[r.IntN(len(vals))], vals[r.IntN(len(vals))]
		xs := float64(x) * 0x1p896 // exact: |x| < 2¹²⁸
		if math.IsInf(xs, 0) {
			t.Fatalf("x = %g overflows when scaled", x)
		}
		got, want := scaledBits(w)*xs, float64(w)*float64(x)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("w = %g, x = %g: scaled product %g, want %g", w, x, got, want)
		}
	}
}

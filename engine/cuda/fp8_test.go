package cuda

import (
	"math"
	"testing"

	"proscenium/engine/checkpoint"
)

// fp8TopByteToFloat mirrors fp8_top_byte_to_float in kernels/common.cuh, the
// integer E4M3 decoding of the pre-sm_90 kernels and the "i" GEMV variants;
// fp8TopByteToFloatCUDA is the body it was transcribed from.
func fp8TopByteToFloat(t uint32) float32 {
	return math.Float32frombits(uint32(int32(t)>>4)&0x87f00000) * 0x1p120
}

const fp8TopByteToFloatCUDA = `return __int_as_float(((int32_t)t >> 4) & 0x87f00000) * 0x1p120f;`

func TestFP8TopByteToFloatIsTheKernelsBody(t *testing.T) {
	checkTranscribed(t, "common.cuh", "fp8_top_byte_to_float", fp8TopByteToFloatCUDA)
}

func TestFP8IntegerDecodingIsExact(t *testing.T) {
	for b := 0; b < 256; b++ {
		want := checkpoint.F8E4M3ToF32(byte(b))
		if math.IsNaN(float64(want)) {
			continue // 0x7f, 0xff: weights never hold NaN
		}
		// Lower bits hold the neighbouring bytes in the kernel; they must not matter.
		for _, low := range []uint32{0, 0xffffff, 0x5a5a5a} {
			if got := fp8TopByteToFloat(uint32(b)<<24 | low); got != want {
				t.Fatalf("byte %#02x (low %#x): %v, want %v", b, low, got, want)
			}
		}
	}
}

package cuda

import "math"

// Host-side packing of the codec's weights for kernels/codec.cu: FP16 with
// round-to-nearest-even (torch's .half(), as the reference's FP16 vocoder
// casts its weights), convolution weights as the GEMM's B operand with the
// channel counts padded for the tensor-core tiles. Plain Go, so it is tested
// without a GPU.

// Tile sizes of codec_conv_gemm: input channels pad to codecPadK (its k
// tile: a tile never straddles two taps), outputs to codecPadN (its n tile).
const (
	codecPadK = 32
	codecPadN = 64
)

// f32ToF16 rounds to the nearest IEEE half, ties to even; beyond the largest
// half it gives ±Inf, NaN stays NaN.
func f32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 112 // the half's biased exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	var h, rem, half uint32
	if e <= 0 { // a half subnormal (or zero): units of 2^-24
		shift := uint(14 - e)
		if shift > 24 {
			return sign
		}
		m := man | 0x800000 // float32 subnormals returned above (shift > 24)
		h, rem, half = m>>shift, m&(1<<shift-1), 1<<(shift-1)
	} else {
		h, rem, half = uint32(e)<<10|man>>13, man&0x1fff, 0x1000
	}
	if rem > half || (rem == half && h&1 == 1) {
		h++ // a carry into the exponent is the right result (up to Inf)
	}
	return sign | uint16(h)
}

// packConvF16 lays a conv weight W [out][taps][in] out as the GEMM's B:
// [npad][taps][cpad] FP16, zero in the padding.
func packConvF16(w []float32, out, taps, in int) []uint16 {
	npad, cpad := roundUp(out, codecPadN), roundUp(in, codecPadK)
	b := make([]uint16, npad*taps*cpad)
	for o := 0; o < out; o++ {
		for k := 0; k < taps; k++ {
			src := w[(o*taps+k)*in : (o*taps+k+1)*in]
			dst := b[(o*taps+k)*cpad:]
			for c, v := range src {
				dst[c] = f32ToF16(v)
			}
		}
	}
	return b
}

// interleaveRows returns rows a[0], b[0], a[1], b[1], … of two [n][width]
// matrices: the SwiGLU GEMM computes a gate and its up projection as a
// column pair.
func interleaveRows(a, b []float32, n, width int) []float32 {
	out := make([]float32, 2*n*width)
	for i := 0; i < n; i++ {
		copy(out[2*i*width:], a[i*width:(i+1)*width])
		copy(out[(2*i+1)*width:], b[i*width:(i+1)*width])
	}
	return out
}

// padF32 returns v extended with zeros to n values.
func padF32(v []float32, n int) []float32 {
	out := make([]float32, n)
	copy(out, v)
	return out
}

// snakeInv is 1/(α + 1e-9) per channel, in float32 as the reference forms it.
func snakeInv(alpha []float32) []float32 {
	inv := make([]float32, len(alpha))
	for i, a := range alpha {
		inv[i] = 1 / (a + 1e-9)
	}
	return inv
}

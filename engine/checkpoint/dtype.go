package checkpoint

import (
	"encoding/binary"
	"math"
)

// Element conversions between the checkpoint types and float32. Rounding to
// the narrow types is round-to-nearest-even, as PyTorch does.

// F32FromBytes reads one little-endian float32.
func F32FromBytes(b []byte) float32 {
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

// BF16ToF32 widens a bfloat16 bit pattern exactly.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 rounds to the nearest bfloat16, ties to even; NaN stays NaN.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it quiet and non-zero
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// F16ToF32 widens an IEEE half-precision bit pattern exactly.
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		// subnormal: value = man × 2^-24
		v := float32(man) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// F8E4M3ToF32 widens an OCP float8 E4M3FN value (bias 7, no infinities,
// S.1111.111 is NaN, largest finite 448) exactly.
func F8E4M3ToF32(b byte) float32 { return f8e4m3Table[b] }

var f8e4m3Table = func() (t [256]float32) {
	for i := range t {
		b := byte(i)
		exp := int(b>>3) & 0xf
		man := float64(b & 7)
		var v float64
		switch {
		case b&0x7f == 0x7f:
			v = math.NaN()
		case exp == 0:
			v = man / 8 * math.Ldexp(1, -6)
		default:
			v = (1 + man/8) * math.Ldexp(1, exp-7)
		}
		if b&0x80 != 0 {
			v = -v
		}
		t[i] = float32(v)
	}
	return t
}()

// F32ToF8E4M3 rounds to the nearest E4M3FN value, ties to even, saturating at
// ±448 (PyTorch's saturating cast); NaN maps to NaN.
func F32ToF8E4M3(f float32) byte {
	if f != f {
		return 0x7f
	}
	var sign byte
	if math.Signbit(float64(f)) {
		sign = 0x80
		f = -f
	}
	if f >= 448 {
		return sign | 0x7e
	}
	// Search the 127 finite non-negative codes, which are monotonic in value.
	lo, hi := 0, 0x7e
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if f8e4m3Table[mid] <= f {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	if lo == 0x7e {
		return sign | 0x7e
	}
	below, above := f8e4m3Table[lo], f8e4m3Table[lo+1]
	switch d1, d2 := f-below, above-f; {
	case d1 < d2:
		return sign | byte(lo)
	case d2 < d1:
		return sign | byte(lo+1)
	}
	if lo&1 == 0 {
		return sign | byte(lo)
	}
	return sign | byte(lo+1)
}

// DequantFP8Blocks expands an F8_E4M3 matrix [rows, cols] with its block scale
// table scaleInv [ceil(rows/block), ceil(cols/block)] into float32:
// w[r][c] = fp8[r][c] × scaleInv[r/block][c/block].
func DequantFP8Blocks(w []byte, rows, cols int, scaleInv []float32, block int) []float32 {
	out := make([]float32, rows*cols)
	sc := (cols + block - 1) / block
	for r := 0; r < rows; r++ {
		srow := scaleInv[(r/block)*sc:]
		for c := 0; c < cols; c++ {
			out[r*cols+c] = f8e4m3Table[w[r*cols+c]] * srow[c/block]
		}
	}
	return out
}

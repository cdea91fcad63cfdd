package checkpoint

import (
	"math"
	"testing"
)

func TestF8E4M3KnownValues(t *testing.T) {
	cases := []struct {
		b    byte
		want float32
	}{
		{0x00, 0}, {0x38, 1}, {0x40, 2}, {0xb8, -1}, {0x7e, 448}, {0xfe, -448},
		{0x01, 1.0 / 512}, // smallest subnormal: 2^-9
		{0x08, 1.0 / 64},  // smallest normal: 2^-6
		{0x3c, 1.5},
	}
	for _, c := range cases {
		if got := F8E4M3ToF32(c.b); got != c.want {
			t.Errorf("F8E4M3ToF32(%#02x) = %v, want %v", c.b, got, c.want)
		}
	}
	if v := F8E4M3ToF32(0x7f); v == v {
		t.Errorf("0x7f should be NaN, got %v", v)
	}
}

func TestF8E4M3RoundTripAndRounding(t *testing.T) {
	for i := 0; i < 256; i++ {
		b := byte(i)
		if b&0x7f == 0x7f {
			continue
		}
		v := F8E4M3ToF32(b)
		got := F32ToF8E4M3(v)
		if F8E4M3ToF32(got) != v { // ±0 both map back to a zero
			t.Errorf("round trip %#02x -> %v -> %#02x", b, v, got)
		}
	}
	// Halfway between 1 (0x38) and 1.125 (0x39) ties to the even code 0x38;
	// halfway between 1.125 and 1.25 ties to 0x3a.
	if got := F32ToF8E4M3(1.0625); got != 0x38 {
		t.Errorf("tie 1.0625 -> %#02x, want 0x38", got)
	}
	if got := F32ToF8E4M3(1.1875); got != 0x3a {
		t.Errorf("tie 1.1875 -> %#02x, want 0x3a", got)
	}
	if got := F32ToF8E4M3(1e6); got != 0x7e {
		t.Errorf("saturation -> %#02x, want 0x7e", got)
	}
	if got := F32ToF8E4M3(-1e6); got != 0xfe {
		t.Errorf("negative saturation -> %#02x, want 0xfe", got)
	}
}

func TestBF16AndF16(t *testing.T) {
	if got := BF16ToF32(0x3f80); got != 1 {
		t.Errorf("BF16 0x3f80 = %v", got)
	}
	// 1 + 2^-8 is halfway between bf16 1 and 1+2^-7: ties to even (1).
	if got := F32ToBF16(1 + 1.0/256); got != 0x3f80 {
		t.Errorf("bf16 tie -> %#04x", got)
	}
	if got := F32ToBF16(1 + 3.0/256); got != 0x3f82 {
		t.Errorf("bf16 tie up -> %#04x", got)
	}
	if v := BF16ToF32(F32ToBF16(float32(math.NaN()))); v == v {
		t.Error("NaN lost")
	}
	f16 := []struct {
		h    uint16
		want float32
	}{{0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0001, 5.960464477539063e-08}, {0x7c00, float32(math.Inf(1))}}
	for _, c := range f16 {
		if got := F16ToF32(c.h); got != c.want {
			t.Errorf("F16ToF32(%#04x) = %v, want %v", c.h, got, c.want)
		}
	}
}

func TestDequantFP8Blocks(t *testing.T) {
	rows, cols, block := 3, 5, 2
	w := make([]byte, rows*cols)
	for i := range w {
		w[i] = 0x38 // 1.0
	}
	scale := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9} // [2][3]
	got := DequantFP8Blocks(w, rows, cols, scale, block)
	want := []float32{1, 1, 2, 2, 3, 1, 1, 2, 2, 3, 4, 4, 5, 5, 6}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d = %v, want %v (all %v)", i, got[i], want[i], got)
		}
	}
}

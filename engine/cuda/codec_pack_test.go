package cuda

import (
	"math"
	"testing"

	"proscenium/engine/checkpoint"
)

func TestF32ToF16RoundTripsEveryHalf(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := checkpoint.F16ToF32(uint16(h))
		if f != f {
			if g := f32ToF16(f); g&0x7c00 != 0x7c00 || g&0x3ff == 0 {
				t.Fatalf("NaN %04x became %04x", h, g)
			}
			continue
		}
		if g := f32ToF16(f); g != uint16(h) {
			t.Fatalf("half %04x (%g) came back as %04x", h, f, g)
		}
	}
}

// Between two neighbouring halves a float rounds to the nearer, a tie to the
// one with an even mantissa; past the largest half it is Inf.
func TestF32ToF16RoundsToNearestEven(t *testing.T) {
	for _, tc := range []struct {
		f    float32
		want uint16
	}{
		{1 + 1.0/2048, 0x3c00},                     // tie between 1 and 1+2⁻¹⁰: even (1)
		{1 + 3.0/2048, 0x3c02},                     // tie between 1+2⁻¹⁰ and 1+2⁻⁹: even
		{1 + 1.0/2048 + 1.0/65536, 0x3c01},         // just above the tie
		{65504, 0x7bff},                            // largest half
		{65520, 0x7c00},                            // tie with 65536: rounds to Inf
		{-65519, 0xfbff},                           // below the tie
		{float32(math.Ldexp(1, -24)), 0x0001},      // smallest subnormal
		{float32(math.Ldexp(1, -25)), 0x0000},      // half of it: tie to even (0)
		{float32(math.Ldexp(1.5, -25)), 0x0001},    // above the tie
		{float32(math.Ldexp(3, -25)), 0x0002},      // tie between 1 and 2 units: even
		{float32(math.Ldexp(1, -14)), 0x0400},      // smallest normal
		{float32(math.Ldexp(1023.5, -24)), 0x0400}, // subnormal rounding up into the normals
		{float32(math.Ldexp(1, -30)), 0},
		{float32(math.Inf(-1)), 0xfc00},
	} {
		if got := f32ToF16(tc.f); got != tc.want {
			t.Errorf("f32ToF16(%g) = %04x, want %04x", tc.f, got, tc.want)
		}
	}
}

func TestPackConvF16Layout(t *testing.T) {
	const out, taps, in = 3, 2, 5
	w := make([]float32, out*taps*in)
	for i := range w {
		w[i] = float32(i + 1)
	}
	b := packConvF16(w, out, taps, in)
	if len(b) != codecPadN*taps*codecPadK {
		t.Fatalf("%d values, want %d", len(b), codecPadN*taps*codecPadK)
	}
	for o := 0; o < codecPadN; o++ {
		for k := 0; k < taps; k++ {
			for c := 0; c < codecPadK; c++ {
				want := float32(0)
				if o < out && c < in {
					want = w[(o*taps+k)*in+c]
				}
				if got := checkpoint.F16ToF32(b[(o*taps+k)*codecPadK+c]); got != want {
					t.Fatalf("B[%d][%d][%d] = %g, want %g", o, k, c, got, want)
				}
			}
		}
	}
}

func TestCodecPackHelpers(t *testing.T) {
	a := []float32{1, 2, 3, 4}
	b := []float32{5, 6, 7, 8}
	got := interleaveRows(a, b, 2, 2)
	want := []float32{1, 2, 5, 6, 3, 4, 7, 8}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("interleaveRows: %v, want %v", got, want)
		}
	}
	if p := padF32([]float32{1, 2}, 4); len(p) != 4 || p[1] != 2 || p[3] != 0 {
		t.Errorf("padF32: %v", p)
	}
	// 1/(α+1e-9) in float32, as the reference (α + 1e-9 rounds to α here).
	if inv := snakeInv([]float32{0.5, 2}); inv[0] != 2 || inv[1] != 0.5 {
		t.Errorf("snakeInv: %v", inv)
	}
	if roundUp(96, codecPadK) != 96 || roundUp(97, codecPadK) != 128 || roundUp(1, codecPadN) != 64 {
		t.Error("roundUp")
	}
}

package cpu

import (
	"math"
	"testing"
)

// TestRopeRotateHalf checks partial rotate-half RoPE by hand: dim 4 of a
// head of 6 (pairs (0,2) and (1,3) turn; 4 and 5 pass), theta 100, position 3.
func TestRopeRotateHalf(t *testing.T) {
	rt := newRopeTable(4, 100)
	x := []float32{1, 2, 3, 4, 5, 6}
	cos, sin := make([]float32, 2), make([]float32, 2)
	rt.cosSin(cos, sin, 3)
	rt.apply(x, cos, sin)
	want := make([]float64, 6)
	for i, f := range []float64{1, 1 / 10.0} { // 100^(-0/4), 100^(-2/4)
		a := 3 * f
		x1, x2 := float64(i+1), float64(i+3)
		want[i], want[i+2] = x1*math.Cos(a)-x2*math.Sin(a), x2*math.Cos(a)+x1*math.Sin(a)
	}
	want[4], want[5] = 5, 6
	for i := range x {
		if math.Abs(float64(x[i])-want[i]) > 1e-6 {
			t.Errorf("x[%d] = %g, want %g", i, x[i], want[i])
		}
	}
}

package cuda

import (
	"math"
	"testing"
)

func TestULPDiff(t *testing.T) {
	one := float32(1)
	next := math.Nextafter32(one, 2)
	negZero := float32(math.Copysign(0, -1))
	tiny := math.Float32frombits(1) // smallest subnormal
	nan := float32(math.NaN())
	for _, c := range []struct {
		name      string
		got, want []float32
		differ    int
		maxULP    int64
	}{
		{"same", []float32{1, -2, 3}, []float32{1, -2, 3}, 0, 0},
		{"one step", []float32{1, next}, []float32{1, one}, 1, 1},
		{"across zero", []float32{tiny, 0}, []float32{-tiny, negZero}, 2, 2},
		{"signed zeros", []float32{0}, []float32{negZero}, 1, 0},
		{"nan", []float32{nan}, []float32{1}, 1, math.MaxInt64},
		{"lengths", []float32{1, 2}, []float32{1}, 2, math.MaxInt64},
	} {
		d, m := ULPDiff(c.got, c.want)
		if d != c.differ || m != c.maxULP {
			t.Errorf("%s: ULPDiff = %d, %d; want %d, %d", c.name, d, m, c.differ, c.maxULP)
		}
	}
}

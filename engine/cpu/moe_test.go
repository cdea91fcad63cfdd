package cpu

import (
	"math"
	"testing"
)

func TestRoute(t *testing.T) {
	for _, c := range []struct {
		logits []float32
		k      int
		want   []int
	}{
		{[]float32{0, 2, 1, 3}, 2, []int{3, 1}},
		{[]float32{1, 1, 1, 0}, 2, []int{0, 1}}, // ties go to the lower index
		{[]float32{-1, 5}, 1, []int{1}},
	} {
		idx, w := route(c.logits, c.k)
		var z float64
		for _, l := range c.logits {
			z += math.Exp(float64(l))
		}
		var sel float64
		for _, e := range c.want {
			sel += math.Exp(float64(c.logits[e])) / z
		}
		for i, e := range c.want {
			wantW := math.Exp(float64(c.logits[e])) / z / sel
			if idx[i] != e || math.Abs(float64(w[i])-wantW) > 1e-6 {
				t.Errorf("route(%v, %d) = %v %v, want expert %d weight %g at %d", c.logits, c.k, idx, w, e, wantW, i)
			}
		}
	}
}

package cpu

import (
	"math"
	"math/rand/v2"
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

// TestSoftmaxAnyOrder checks the router softmax against its definition
// (each exponential rounded once, an exact sum rounded once, one float32
// division) and that permuting the logits permutes the probabilities bit
// for bit, as a device kernel summing in its own order must reproduce.
func TestSoftmaxAnyOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 256)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	p := softmax(x)
	m := float32(math.Inf(-1))
	for _, v := range x {
		m = max(m, v)
	}
	e := make([]float64, len(x))
	for i, v := range x {
		e[i] = float64(float32(math.Exp(float64(v - m))))
	}
	one := make([]float64, len(x))
	one[0] = 1
	// exactRatio(one, e) is 1/Σe; the definition divides by float32(Σe).
	s := 1 / exactRatio(one, e)
	differ := 0
	for i := range p {
		if want := float32(e[i]) / s; p[i] != want {
			differ++
		}
	}
	if differ > 2 {
		t.Errorf("%d of %d probabilities differ from e_i / float32(exact Σe)", differ, len(p))
	}
	perm := r.Perm(len(x))
	px := make([]float32, len(x))
	for i, j := range perm {
		px[i] = x[j]
	}
	pp := softmax(px)
	for i, j := range perm {
		if math.Float32bits(pp[i]) != math.Float32bits(p[j]) {
			t.Errorf("logit %d: probability %v in order, %v permuted", j, p[j], pp[i])
		}
	}
}

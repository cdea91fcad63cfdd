package drama3

import (
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/sampling"
)

// Every draw that logits moved by at most d flip is a NearTie: the
// criterion the GPU checks hold a divergence to is never too tight. The draws are the CPU sampler's, on random logits of several
// shapes, perturbations and settings; the test fails too if too few draws
// flip to try the bound.
func TestNearTieCoversEveryFlip(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	settings := []sampling.Settings{{Temperature: 1, TopP: 0.9, TopK: 30}, {Temperature: 1, TopP: 1}, {Temperature: 0.7, TopP: 0.95}, {Temperature: 1.5, TopP: 0.8, TopK: 5}}
	const trials = 8000
	flips, near := 0, 0
	for trial := 0; trial < trials; trial++ {
		s := settings[trial%len(settings)]
		n := []int{16, 200, 1025}[r.IntN(3)]
		sigma := []float64{0.5, 2, 6}[r.IntN(3)]
		ref := make([]float32, n)
		for i := range ref {
			ref[i] = float32(r.NormFloat64() * sigma)
		}
		d := math.Pow(10, -2-4*r.Float64()) // 1e-6 … 1e-2
		other := make([]float32, n)
		for i := range other {
			other[i] = ref[i] + float32((2*r.Float64()-1)*d)
		}
		sampler, err := NewSampler(s, 1)
		if err != nil {
			t.Fatal(err)
		}
		// Targets near a boundary flip often; the rest rarely.
		u := r.Float64()
		a, errA := sampler.SampleWith(ref, u)
		b, errB := sampler.SampleWith(other, u)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if a == b {
			continue
		}
		flips++
		ok, m, bound := NearTie(ref, other, s, u, a, b)
		if m <= bound {
			near++
		}
		if !ok {
			t.Fatalf("trial %d (%+v, %d logits, d %.3g): the draw flipped %d → %d at margin %.3g (bound %.3g), logits %v and %v apart", trial, s, n, d, a, b, m, bound, ref[a], ref[b])
		}
	}
	t.Logf("%d of %d draws flipped, %d of them within the margin bound, the rest swaps of near-equal logits", flips, trials, near)
	if flips < 20 {
		t.Fatalf("only %d draws flipped: the bound was hardly tried", flips)
	}
}

// A draw far from its boundaries has a large margin, a greedy one none.
func TestDrawMargin(t *testing.T) {
	logits := []float32{2, 1, 0}
	s := sampling.Settings{Temperature: 1, TopP: 1}
	// Weights e^0, e^-1, e^-2 over z: the boundaries at 0.665 and 0.910.
	if m := DrawMargin(logits, s, 0.3); math.Abs(m-(0.665-0.3)) > 0.01 {
		t.Errorf("margin %.4f, want about 0.365", m)
	}
	if m := DrawMargin(logits, s, 0.665241); m > 1e-5 {
		t.Errorf("a target on the boundary has margin %.3g", m)
	}
	if m := DrawMargin(logits, sampling.Settings{TopP: 1}, 0.5); !math.IsInf(m, 1) {
		t.Errorf("greedy margin %v, want +Inf", m)
	}
}

package cpu

import (
	"math"
	"testing"

	"proscenium/engine/drama3"
)

// Rounded copies the whole tree, leaves the original alone, moves weights
// by a float32 rounding step or two (many not at all), and repeats for a
// seed.
func TestRounded(t *testing.T) {
	qkv := make([]float32, 1000)
	for i := range qkv {
		qkv[i] = float32(math.Sin(float64(i)+0.5)) * 3
	}
	w := &drama3.DeltaNet[[]float32]{InProjQKV: qkv, Norm: []float32{0.5}}
	orig := append([]float32(nil), qkv...)
	a, b := Rounded(w, 1), Rounded(w, 1)
	if &a.InProjQKV[0] == &w.InProjQKV[0] || a.OutProj != nil || len(a.Norm) != 1 {
		t.Fatalf("not a deep copy of the tree: %+v", a)
	}
	moved, worst := 0, 0.0
	for i, x := range w.InProjQKV {
		if x != orig[i] {
			t.Fatalf("the original changed at %d", i)
		}
		if a.InProjQKV[i] != b.InProjQKV[i] {
			t.Fatalf("same seed, different weights at %d", i)
		}
		rel := math.Abs(float64(a.InProjQKV[i]-x)) / math.Abs(float64(x))
		if rel > 0 {
			moved++
		}
		worst = max(worst, rel)
	}
	if moved < 300 || worst > 8*RoundingNoise {
		t.Errorf("%d of 1000 weights moved, the most by %.3g relative; want about half, by about %g", moved, worst, RoundingNoise)
	}
	if c := Rounded(w, 2); c.InProjQKV[0] == a.InProjQKV[0] && c.InProjQKV[1] == a.InProjQKV[1] && c.InProjQKV[2] == a.InProjQKV[2] {
		t.Errorf("another seed gave the same weights")
	}
}

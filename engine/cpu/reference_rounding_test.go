package cpu

import (
	"context"
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

// Rounded copies a whole loaded model, and refuses what is not a weight.
func TestRoundedModel(t *testing.T) {
	ck := tinyEngine(t)
	a, err := LoadBackend(ck, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadBackendRounded(ck, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The rounded model is another model: its prefill differs, a little.
	prompt := []int{1, 2, 3, 4, 5}
	sa, sb := make([]float32, a.heads.Codes()+1), make([]float32, b.heads.Codes()+1)
	if err := a.Begin(context.Background(), prompt, sa); err != nil {
		t.Fatal(err)
	}
	if err := b.Begin(context.Background(), prompt, sb); err != nil {
		t.Fatal(err)
	}
	var diff, scale float64
	for i := range sa {
		diff = max(diff, math.Abs(float64(sa[i]-sb[i])))
		scale = max(scale, math.Abs(float64(sa[i])))
	}
	if diff == 0 || diff > 1e-4*scale {
		t.Errorf("semantic logits moved by %g of %g: want a rounding-sized change", diff, scale)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Errorf("Rounded of a map did not panic")
		}
	}()
	Rounded(&struct{ M map[string]float32 }{M: map[string]float32{"a": 1}}, 1)
}

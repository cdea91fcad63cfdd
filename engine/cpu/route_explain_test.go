package cpu

import (
	"slices"
	"testing"

	"proscenium/engine/drama3"
)

// firstDiff is the first frame and codebook in which two takes differ
// (codebook −1: one ended there and the other did not; ok false: none).
func firstDiff(a, b TakeLog) (frame, codebook int, ok bool) {
	for f := 0; f < min(len(a.Frames), len(b.Frames)); f++ {
		for c := range a.Frames[f] {
			if a.Frames[f][c] != b.Frames[f][c] {
				return f, c, true
			}
		}
	}
	if len(a.Frames) != len(b.Frames) || a.End != b.End {
		return min(len(a.Frames), len(b.Frames)), -1, true
	}
	return 0, 0, false
}

// tieLayer is the layer whose router rows tieExperts share in the tied
// model: the last (the full-attention layer, as in session 12's case).
const tieLayer = 3

// tied makes experts 2 and 5 of tieLayer's router the same row (expert 2's),
// so their router logits are equal on every row: wherever they meet at the
// top-k boundary the margin is 0, a tie that float32 sums in any order may
// break either way.
func tied(m *drama3.Model[[]float32]) *drama3.Model[[]float32] {
	mo := &m.Backbone.Layers[tieLayer].MoE
	hid := len(mo.Router) / 8
	r := slices.Clone(mo.Router)
	copy(r[5*hid:6*hid], r[2*hid:3*hid])
	mo.Router = r
	return m
}

// A take that broke a routing tie the other way — the tied model with the
// two experts swapped at one step, what a backend summing in another order
// may do — is a routing near-tie of that step, confirmed by the replay.
func TestExplainRoutingNearTie(t *testing.T) {
	ck := tinyEngine(t)
	ref := tinyBackend(t, ck, tied)
	const seed, n = 4, 24
	// The steps where the two tied experts meet at tieLayer's boundary.
	var steps []int
	ref.SetRouteTap(&RouteTap{Margin: func(m RouteMargin) {
		if m.Layer == tieLayer && m.Pos >= len(tinyPrompt) && m.Kth == 2 && m.Next == 5 {
			if m.Margin != 0 {
				t.Errorf("pos %d: tied experts' margin %g", m.Pos, m.Margin)
			}
			steps = append(steps, m.Pos)
		}
	}})
	want := runTake(t, ref, seed, n)
	ref.SetRouteTap(nil)
	if len(steps) == 0 {
		t.Fatalf("the tied experts never met at the boundary in %d frames", len(want.Frames))
	}
	e := &Explainer{Ref: ref, Prompt: tinyPrompt, Settings: tieSettings, Tol: 1e-4, Confirm: true,
		Rounded: func() (*Backend, error) {
			return loadBackend(ck, nil, func(m *drama3.Model[[]float32]) *drama3.Model[[]float32] { return Rounded(tied(m), 1) })
		}}
	other := tinyBackend(t, ck, tied)
	tried := 0
	for _, pos := range steps {
		other.SetRouteTap(&RouteTap{Swaps: []RouteSwap{{Pos: pos, Layer: tieLayer, Out: 2, In: 5}}})
		got := runTake(t, other, seed, n)
		f, c, ok := firstDiff(want, got)
		if !ok {
			continue // the swap left this take's codes as they were
		}
		tried++
		x, err := e.Explain(seed, want, got, f, c)
		if err != nil {
			t.Fatal(err)
		}
		rt := x.Routing
		t.Logf("swap at pos %d: diverges at frame %d codebook %d: %s (logits %.3g, first off %d), routing %+v", pos, f, c, x.Class, x.LogitsRel, x.FirstOff, rt)
		if x.Class != RoutingNearTie || rt == nil || rt.Pos != pos || rt.Layer != tieLayer || rt.Margin != 0 || !rt.Tie ||
			rt.Confirmed == nil || !*rt.Confirmed || rt.Frame != pos-len(tinyPrompt)+1 || x.FirstOff != rt.Frame {
			t.Errorf("swap at pos %d: class %q, routing %+v; want a confirmed routing near-tie there", pos, x.Class, rt)
		}
		if rt != nil && rt.Spread <= 0 {
			t.Errorf("swap at pos %d: no measured spread", pos)
		}
		if tried == 2 {
			break
		}
	}
	if tried == 0 {
		t.Fatalf("no swap at %d tied steps changed the take", len(steps))
	}
}

// A take of a model with a changed weight (the first layer's shared expert
// down projection 1 % larger) diverges unexplained: its logits are off
// from the prompt on and no routing margin of the prefill is a tie.
func TestExplainChangedWeightUnexplained(t *testing.T) {
	ck := tinyEngine(t)
	ref := tinyBackend(t, ck, nil)
	other := tinyBackend(t, ck, func(m *drama3.Model[[]float32]) *drama3.Model[[]float32] {
		mo := &m.Backbone.Layers[0].MoE
		d := slices.Clone(mo.SharedDown)
		for i := range d {
			d[i] *= 1.01
		}
		mo.SharedDown = d
		return m
	})
	e := &Explainer{Ref: ref, Prompt: tinyPrompt, Settings: tieSettings, Tol: 1e-4, Confirm: true,
		Rounded: func() (*Backend, error) { return LoadBackendRounded(ck, 1) }}
	for seed := uint64(1); seed <= 8; seed++ {
		want, got := runTake(t, ref, seed, 24), runTake(t, other, seed, 24)
		f, c, ok := firstDiff(want, got)
		if !ok {
			continue
		}
		x, err := e.Explain(seed, want, got, f, c)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("seed %d: diverges at frame %d codebook %d: %s (logits %.3g, first off %d), routing %+v", seed, f, c, x.Class, x.LogitsRel, x.FirstOff, x.Routing)
		if x.Class != Unexplained || x.FirstOff != 0 || x.Routing == nil || x.Routing.Tie || x.Routing.Frame != 0 {
			t.Errorf("seed %d: class %q (first off %d, routing %+v); want unexplained, off from frame 0", seed, x.Class, x.FirstOff, x.Routing)
		}
		return
	}
	t.Fatal("the changed weight changed no take")
}

// A replay agrees up to the diverging code, not past it; an end agrees
// only with an end at the same frame.
func TestAgreesThrough(t *testing.T) {
	a := [][]int{{1, 2, 3}, {4, 5, 6}}
	for _, c := range []struct {
		b          [][]int
		bEnd       bool
		f, k       int
		aEnd, want bool
	}{
		{[][]int{{1, 2, 3}, {4, 5, 7}}, false, 1, 1, false, true}, // differs after the code
		{[][]int{{1, 2, 3}, {4, 9, 6}}, false, 1, 1, false, false},
		{[][]int{{1, 2, 0}, {4, 5, 6}}, false, 1, 0, false, false}, // an earlier frame differs
		{[][]int{{1, 2, 3}}, true, 1, -1, false, false},            // b ended at frame 1, a did not
		{[][]int{{1, 2, 3}}, false, 1, -1, false, true},            // b ran out of frames
	} {
		if got := agreesThrough(a, c.aEnd, c.b, c.bEnd, c.f, c.k); got != c.want {
			t.Errorf("%v against %v (end %v) through frame %d codebook %d: %v, want %v", a, c.b, c.bEnd, c.f, c.k, got, c.want)
		}
	}
}

// The CPU against itself on weights rounded differently (another seed than
// the spread's) — a legitimate difference of float32 rounding, as a
// backend summing in another order makes — diverges only at explained
// near-ties: no false alarm.
func TestExplainRoundedTakes(t *testing.T) {
	if testing.Short() {
		t.Skip("32 takes")
	}
	ck := tinyEngine(t)
	ref := tinyBackend(t, ck, nil)
	other, err := LoadBackendRounded(ck, 2)
	if err != nil {
		t.Fatal(err)
	}
	e := &Explainer{Ref: ref, Prompt: tinyPrompt, Settings: tieSettings, Tol: 1e-4, Confirm: true,
		Rounded: func() (*Backend, error) { return LoadBackendRounded(ck, 1) }}
	classes := map[string]int{}
	for seed := uint64(1); seed <= 16; seed++ {
		want, got := runTake(t, ref, seed, 40), runTake(t, other, seed, 40)
		f, c, ok := firstDiff(want, got)
		if !ok {
			classes["identical"]++
			continue
		}
		x, err := e.Explain(seed, want, got, f, c)
		if err != nil {
			t.Fatal(err)
		}
		classes[x.Class]++
		if x.Class == Unexplained {
			t.Errorf("seed %d: diverges at frame %d codebook %d unexplained (logits %.3g, first off %d, draw margin %.3g against %.3g, routing %+v)", seed, f, c, x.LogitsRel, x.FirstOff, x.DrawMargin, x.DrawBound, x.Routing)
		}
	}
	t.Logf("16 takes against the CPU rounded differently: %v", classes)
}

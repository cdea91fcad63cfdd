package cpu

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"proscenium/engine/demo/qwen3"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// tinyEngine writes the demo checkpoint (make-tiny's default geometry: 4
// layers, 8 experts, top 4) and opens it with its tokenizer and codec.
func tinyEngine(t *testing.T) *drama3.Checkpoint {
	t.Helper()
	base, err := qwen3.TokenizerJSON()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := drama3.WriteTiny(dir, drama3.TinyOptions{Seed: 1, BaseTokenizer: base}); err != nil {
		t.Fatal(err)
	}
	ck, err := drama3.LoadEngine(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ck.Close() })
	return ck
}

// tinyBackend is ck's CPU backend with edit (nil: none) applied to its
// loaded weights.
func tinyBackend(t *testing.T, ck *drama3.Checkpoint, edit func(*drama3.Model[[]float32]) *drama3.Model[[]float32]) *Backend {
	t.Helper()
	b, err := loadBackend(ck, nil, edit)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var tieSettings = sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}

// tinyPrompt is a short prompt of the tiny vocabulary.
var tinyPrompt = []int{11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}

// runTake is a free-running take of n frames on b (seed), with its logits.
func runTake(t *testing.T, b *Backend, seed uint64, n int) TakeLog {
	t.Helper()
	sf := frames(t, b)
	log := drama3.LogitsLog{}
	sf.TapLogits(log.Tap)
	if err := sf.Begin(context.Background(), tinyPrompt, tieSettings, seed); err != nil {
		t.Fatal(err)
	}
	fr, end, err := drama3.MakeFrames(sf, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	return TakeLog{Frames: fr, End: end, Logits: log}
}

// The tap sees every row of every layer once, at its position, and its
// margin is the k-th and (k+1)-th best router logits of the row; on rows
// of one layer, the logits and Σ|w·x| are those of a direct float64
// computation.
func TestRouteTapMargins(t *testing.T) {
	ck := tinyEngine(t)
	b := tinyBackend(t, ck, nil)
	g := b.backbone.cfg
	k, E := g.NumExpertsPerTok, g.NumExperts
	seen := map[routeKey]int{}
	b.SetRouteTap(&RouteTap{Margin: func(m RouteMargin) {
		seen[routeKey{m.Pos, m.Layer}]++
		if len(m.Logits) != E || m.Width != g.HiddenSize {
			t.Fatalf("pos %d layer %d: %d logits of width %d", m.Pos, m.Layer, len(m.Logits), m.Width)
		}
		// The boundary by a plain sort of the logits (largest first,
		// ties to the lower index).
		order := make([]int, E)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, c int) bool { return m.Logits[order[a]] > m.Logits[order[c]] })
		if m.Kth != order[k-1] || m.Next != order[k] {
			t.Errorf("pos %d layer %d: boundary experts %d, %d; the sorted logits say %d, %d (%v)", m.Pos, m.Layer, m.Kth, m.Next, order[k-1], order[k], m.Logits)
		}
		want := float64(m.Logits[order[k-1]]) - float64(m.Logits[order[k]])
		if m.Margin != want || m.Margin < 0 || m.KthLogit != m.Logits[m.Kth] || m.NextLogit != m.Logits[m.Next] {
			t.Errorf("pos %d layer %d: margin %g, want %g", m.Pos, m.Layer, m.Margin, want)
		}
		if m.Rel != math.Abs(want)/math.Max(math.Abs(float64(m.KthLogit)), math.Abs(float64(m.NextLogit))) || !(m.Scale > 0) || RouteGammaBound(m) <= 0 {
			t.Errorf("pos %d layer %d: relative margin %g, scale %g", m.Pos, m.Layer, m.Rel, m.Scale)
		}
	}})
	const n = 6
	take := runTake(t, b, 3, n)
	rows := len(tinyPrompt) + len(take.Frames) - 1
	if take.End {
		rows++
	}
	if len(seen) != rows*g.NumLayers {
		t.Errorf("the tap saw %d (row, layer) pairs, want %d rows × %d layers", len(seen), rows, g.NumLayers)
	}
	for key, c := range seen {
		if c != 1 || key.pos < 0 || key.pos >= rows || key.layer < 0 || key.layer >= g.NumLayers {
			t.Errorf("pos %d layer %d seen %d times", key.pos, key.layer, c)
		}
	}

	// One layer's rows against a direct computation in float64.
	w := &b.backbone.w.Layers[1].MoE
	hid := g.HiddenSize
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, 7*hid)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	var got []RouteMargin
	tap := &routeRows{tap: &RouteTap{Margin: func(m RouteMargin) { m.Logits = slices.Clone(m.Logits); got = append(got, m) }}, layer: 1, pos0: 40, experts: E, hid: hid}
	moeForward(make([]float32, 7*hid), x, 7, w, g, tap)
	if len(got) != 7 {
		t.Fatalf("%d margins of 7 rows", len(got))
	}
	for i, m := range got {
		if m.Pos != 40+i || m.Layer != 1 {
			t.Errorf("row %d: pos %d layer %d", i, m.Pos, m.Layer)
		}
		l := make([]float64, E)
		for e := range l {
			for j := range hid {
				l[e] += float64(w.Router[e*hid+j]) * float64(x[i*hid+j])
			}
			if d := math.Abs(l[e] - float64(m.Logits[e])); d > 1e-6*math.Abs(l[e])+1e-12 {
				t.Errorf("row %d expert %d: logit %g, direct %g", i, e, m.Logits[e], l[e])
			}
		}
		var s float64
		for _, e := range []int{m.Kth, m.Next} {
			for j := range hid {
				s += math.Abs(float64(w.Router[e*hid+j]) * float64(x[i*hid+j]))
			}
		}
		if math.Abs(s-m.Scale) > 1e-12*s {
			t.Errorf("row %d: scale %g, direct %g", i, m.Scale, s)
		}
		if d := math.Abs(m.Margin - (l[m.Kth] - l[m.Next])); d > 1e-6*math.Max(math.Abs(l[m.Kth]), 1) {
			t.Errorf("row %d: margin %g, direct %g", i, m.Margin, l[m.Kth]-l[m.Next])
		}
	}
}

// A tap (an observer and a swap at a row that never comes) leaves the
// take's every code and logit with the bits it has without one, and the
// MoE's output too; a swap that applies changes the routing.
func TestRouteTapKeepsBits(t *testing.T) {
	ck := tinyEngine(t)
	b := tinyBackend(t, ck, nil)
	plain := runTake(t, b, 5, 8)
	var calls int
	b.SetRouteTap(&RouteTap{Margin: func(RouteMargin) { calls++ }, Swaps: []RouteSwap{{Pos: 1 << 20, Layer: 0, Out: 0, In: 1}}})
	tapped := runTake(t, b, 5, 8)
	b.SetRouteTap(nil)
	again := runTake(t, b, 5, 8)
	if calls == 0 {
		t.Fatal("the tap saw nothing")
	}
	for _, o := range []TakeLog{tapped, again} {
		if o.End != plain.End || len(o.Frames) != len(plain.Frames) || len(o.Logits) != len(plain.Logits) {
			t.Fatalf("takes differ in length: %d, %d frames", len(o.Frames), len(plain.Frames))
		}
		for f := range plain.Frames {
			if !slices.Equal(o.Frames[f], plain.Frames[f]) {
				t.Errorf("frame %d: codes %v with the tap, %v without", f, o.Frames[f], plain.Frames[f])
			}
		}
		for key, v := range plain.Logits {
			for i := range v {
				if math.Float32bits(v[i]) != math.Float32bits(o.Logits[key][i]) {
					t.Fatalf("frame %d codebook %d logit %d: %g with the tap, %g without", key[0], key[1], i, o.Logits[key][i], v[i])
				}
			}
		}
	}

	// moeForward on rows: no tap, an observing tap, and a swap.
	g := b.backbone.cfg
	w := &b.backbone.w.Layers[2].MoE
	hid, n := g.HiddenSize, 5
	r := rand.New(rand.NewPCG(8, 9))
	x := make([]float32, n*hid)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	ref, obs, swp := make([]float32, n*hid), make([]float32, n*hid), make([]float32, n*hid)
	moeForward(ref, x, n, w, g, nil)
	var ms []RouteMargin
	moeForward(obs, x, n, w, g, &routeRows{tap: &RouteTap{Margin: func(m RouteMargin) { ms = append(ms, m) }}, layer: 2, experts: g.NumExperts, hid: hid})
	for i := range ref {
		if math.Float32bits(ref[i]) != math.Float32bits(obs[i]) {
			t.Fatalf("element %d: %g observed, %g without the tap", i, obs[i], ref[i])
		}
	}
	m := ms[3]
	moeForward(swp, x, n, w, g, &routeRows{tap: &RouteTap{Swaps: []RouteSwap{{Pos: 3, Layer: 2, Out: m.Kth, In: m.Next}}}, layer: 2, experts: g.NumExperts, hid: hid})
	for i := range ref {
		row := i / hid
		same := math.Float32bits(ref[i]) == math.Float32bits(swp[i])
		if row != 3 && !same {
			t.Fatalf("row %d changed by a swap at row 3", row)
		}
	}
	if slices.Equal(ref[3*hid:4*hid], swp[3*hid:4*hid]) {
		t.Errorf("the swap at row 3 changed nothing")
	}
	// The swapped routing is route's on logits where the two experts'
	// places are exchanged: the same set as route with Next for Kth.
	idx, _ := route(m.Logits, g.NumExpertsPerTok)
	sidx, swts := routeSwapped(m.Logits, g.NumExpertsPerTok, m.Kth, m.Next, idx, nil)
	if !slices.Contains(sidx, m.Next) || slices.Contains(sidx, m.Kth) || sidx[g.NumExpertsPerTok-1] != m.Next || len(swts) != len(sidx) {
		t.Errorf("swapped routing %v (route's %v, out %d in %d)", sidx, idx, m.Kth, m.Next)
	}
	var sum float64
	for _, v := range swts {
		sum += float64(v)
	}
	if math.Abs(sum-1) > 1e-6 {
		t.Errorf("swapped weights sum to %g", sum)
	}
}

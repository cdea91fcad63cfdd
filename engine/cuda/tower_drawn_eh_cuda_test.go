//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// withTowerEH runs f with the frames' drawn-code embedding as mode
// (towerEH: NewTower reads it, and headAndHnorm at each launch).
func withTowerEH(mode towerEHMode, f func()) {
	defer func(was towerEHMode) { towerEH = was }(towerEH)
	towerEH = mode
	f()
}

// withTowerEH0 runs f with the frames' code-0 embedding as mode (towerEH0:
// NewTower reads it, and each frame's capture).
func withTowerEH0(mode towerEH0Mode, f func()) {
	defer func(was towerEH0Mode) { towerEH0 = was }(towerEH0)
	towerEH0 = mode
	f()
}

// TestTowerDrawnEH holds what NewTower makes for each table layer — the
// drawn layers and the code-0 layers (the shared ones and the first
// residual one) — to its definition: W_h is eh_proj's hnorm columns bit for
// bit, and T[c] is W_e·enorm(E[c]) of the codebook the layer embeds against
// float64 sums of the same float32 products within 1e-5 of Σ|products| (the
// GEMV's float32 sums), every entry (prefill chunks of 5 rows: a ragged last
// chunk); and that tower_gemv2 gives the head and W_h the bits of their two
// GEMVs, a codebook head's and the semantic head's, one row and one or two
// rows of takes.
func TestTowerDrawnEH(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  *drama3.Config
	}{{"demo", drama3.TinyConfig()}, {"odd", drama3.TinyOddConfig()}} {
		t.Run(c.name, func(t *testing.T) {
			withTowerEH(towerEHMerged, func() { testTowerDrawnEH(t, c.cfg) })
		})
	}
}

func testTowerDrawnEH(t *testing.T, cfg *drama3.Config) {
	r := newRand(t)
	f := newTowerFixture(t, r, cfg)
	g := f.g
	D := g.Dim
	tw, err := NewTower(dev, &f.dev, TowerOptions{MaxRows: 8, PrefillChunk: 5, Takes: TowerMaxTakes})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	tw.fastRows = false // the split's GEMVs on the instance tower_gemv2 runs
	layers := towerDrawnLayers(g)
	if len(layers) == 0 || len(tw.drawn) != g.ResidualLayers() {
		t.Fatalf("%d drawn layers, %d made", len(layers), len(tw.drawn))
	}
	if c0 := towerCode0Layers(g); len(c0) != g.SharedLayers+1 || len(tw.code0) != len(c0) {
		t.Fatalf("%d code-0 layers, %d made (shared layers %d)", len(c0), len(tw.code0), g.SharedLayers)
	}
	type tableLayer struct {
		name string
		dr   *towerDrawnEH
		L    *drama3.TowerLayer[[]float32]
		cb   int // the codebook it embeds
	}
	var tables []tableLayer
	for _, i := range layers {
		tables = append(tables, tableLayer{fmt.Sprintf("residual layer %d", i), tw.drawnEH(i), &f.cpuW.Residual[i], i})
	}
	for _, li := range towerCode0Layers(g) {
		L := &f.cpuW.Residual[0]
		if li < g.SharedLayers {
			L = &f.cpuW.Shared[li]
		}
		tables = append(tables, tableLayer{fmt.Sprintf("code-0 layer %d", li), tw.code0EH(li), L, 0})
	}
	for _, tl := range tables {
		dr, L, i := tl.dr, tl.L, tl.cb
		if dr == nil || dr.entries != g.Entries[i] || dr.codeSlot != i {
			t.Fatalf("%s: %+v", tl.name, dr)
		}
		raw := make([]uint16, D*D)
		if err := Download(dev, raw, dr.wh.Block, dr.wh.Off); err != nil {
			t.Fatal(err)
		}
		for row := 0; row < D; row++ {
			for k := 0; k < D; k++ {
				if got, want := checkpoint.BF16ToF32(raw[row*D+k]), L.EHProj[row*2*D+D+k]; math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%s W_h[%d, %d] = %v, eh_proj's column %d %v", tl.name, row, k, got, D+k, want)
				}
			}
		}
		tab := make([]float32, dr.entries*D)
		if err := Download(dev, tab, dr.tab.Block, dr.tab.Off); err != nil {
			t.Fatal(err)
		}
		e, worst := make([]float32, D), 0.0
		for code := 0; code < dr.entries; code++ {
			row := f.cpuW.Embeddings[i][code*D : (code+1)*D]
			ss := 0.0
			for _, v := range row {
				ss += float64(v) * float64(v)
			}
			inv := float32(1 / math.Sqrt(ss/float64(D)+float64(g.Eps)))
			for k, v := range row {
				e[k] = v * inv * L.ENorm[k]
			}
			for o := 0; o < D; o++ {
				sum, abs := 0.0, 0.0
				for k := 0; k < D; k++ {
					p := float64(L.EHProj[o*2*D+k]) * float64(e[k])
					sum, abs = sum+p, abs+math.Abs(p)
				}
				got := float64(tab[code*D+o])
				if d := math.Abs(got - sum); !(d <= 1e-5*abs) {
					t.Fatalf("%s T[%d][%d] = %v, float64 %v (|Δ| %.3g, Σ|p| %.3g)", tl.name, code, o, got, sum, d, abs)
				} else if abs > 0 {
					worst = max(worst, d/abs)
				}
			}
		}
		t.Logf("%s: W_h bit for bit, T's %d rows within %.3g of Σ|products|", tl.name, dr.entries, worst)
	}

	// tower_gemv2 against the two GEMVs it replaces, the same instance split:
	// a codebook head with the next drawn layer's W_h, the semantic head with
	// the first layer's.
	i := layers[0]
	for _, c := range []struct {
		n        int
		byTake   bool
		semantic bool
	}{{1, false, false}, {1, true, false}, {2, true, false}, {1, false, true}, {2, true, true}} {
		head, dr, hr := f.dev.Residual[i-1].Head, tw.drawnEH(i), g.Entries[i]
		if c.semantic {
			head, dr, hr = f.dev.SemanticHead, tw.code0EH(0), g.Entries[0]+1
		}
		if !tw.mergesHeadAndHnorm(c.byTake, c.n) {
			t.Fatalf("%d rows (by take %v): headAndHnorm would not merge", c.n, c.byTake)
		}
		h, hn := randNonZero(r, c.n*D), randNonZero(r, c.n*D)
		outs := map[towerEHMode][2][]float32{}
		for _, mode := range []towerEHMode{towerEHMerged, towerEHSplit} {
			y := poisoned(t, c.n*hr)
			if err := firstErr(Upload(dev, tw.h, 0, h), Upload(dev, tw.cat, 0, hn), dev.Fill32(tw.x, nanBits)); err != nil {
				t.Fatal(err)
			}
			withTowerEH(mode, func() {
				if err := dev.Run(func(q *Queue) error { return tw.headAndHnorm(q, c.byTake, head, hr, tw.h, dr, c.n, y) }); err != nil {
					t.Fatal(err)
				}
			})
			outs[mode] = [2][]float32{download(t, y, c.n*hr), download(t, tw.x, c.n*D)}
		}
		what := fmt.Sprintf("%d rows (by take %v, semantic head %v)", c.n, c.byTake, c.semantic)
		finiteRelErr(t, what+": codebook head", outs[towerEHMerged][0], outs[towerEHSplit][0])
		finiteRelErr(t, what+": W_h", outs[towerEHMerged][1], outs[towerEHSplit][1])
		requireSameBits(t, what+": codebook head", outs[towerEHMerged][0], outs[towerEHSplit][0])
		requireSameBits(t, what+": W_h", outs[towerEHMerged][1], outs[towerEHSplit][1])
	}
}

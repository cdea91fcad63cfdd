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

// TestTowerDrawnEH holds what NewTower makes for each drawn layer to its
// definition: W_h is eh_proj's hnorm columns bit for bit, and T[c] is
// W_e·enorm(E[c]) against float64 sums of the same float32 products within
// 1e-5 of Σ|products| (the GEMV's float32 sums), every entry (prefill chunks
// of 5 rows: a ragged last chunk); and that tower_gemv2 gives the head and
// W_h the bits of their two GEMVs, one row and one or two rows of takes.
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
	for _, i := range layers {
		dr, L := tw.drawnEH(i), &f.cpuW.Residual[i]
		if dr == nil || dr.entries != g.Entries[i] || dr.codeSlot != i {
			t.Fatalf("residual layer %d: %+v", i, dr)
		}
		raw := make([]uint16, D*D)
		if err := Download(dev, raw, dr.wh.Block, dr.wh.Off); err != nil {
			t.Fatal(err)
		}
		for row := 0; row < D; row++ {
			for k := 0; k < D; k++ {
				if got, want := checkpoint.BF16ToF32(raw[row*D+k]), L.EHProj[row*2*D+D+k]; math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("residual layer %d W_h[%d, %d] = %v, eh_proj's column %d %v", i, row, k, got, D+k, want)
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
					t.Fatalf("residual layer %d T[%d][%d] = %v, float64 %v (|Δ| %.3g, Σ|p| %.3g)", i, code, o, got, sum, d, abs)
				} else if abs > 0 {
					worst = max(worst, d/abs)
				}
			}
		}
		t.Logf("residual layer %d: W_h bit for bit, T's %d rows within %.3g of Σ|products|", i, dr.entries, worst)
	}

	// tower_gemv2 against the two GEMVs it replaces, the same instance split.
	i := layers[0]
	head, dr := f.dev.Residual[i-1].Head, tw.drawnEH(i)
	hr := g.Entries[i]
	for _, c := range []struct {
		n      int
		byTake bool
	}{{1, false}, {1, true}, {2, true}} {
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
				if err := dev.Run(func(q *Queue) error { return tw.headAndHnorm(q, c.byTake, head, hr, dr, c.n, y) }); err != nil {
					t.Fatal(err)
				}
			})
			outs[mode] = [2][]float32{download(t, y, c.n*hr), download(t, tw.x, c.n*D)}
		}
		what := fmt.Sprintf("%d rows (by take %v)", c.n, c.byTake)
		finiteRelErr(t, what+": codebook head", outs[towerEHMerged][0], outs[towerEHSplit][0])
		finiteRelErr(t, what+": W_h", outs[towerEHMerged][1], outs[towerEHSplit][1])
		requireSameBits(t, what+": codebook head", outs[towerEHMerged][0], outs[towerEHSplit][0])
		requireSameBits(t, what+": W_h", outs[towerEHMerged][1], outs[towerEHSplit][1])
	}
}

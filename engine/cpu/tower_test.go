package cpu

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"proscenium/engine/drama3"
)

// Tower test geometries: "like" has the real tower's shape rules (head_dim
// 128 with RoPE on the first 64 dims, theta 1e7, 4 shared layers, ten
// codebooks) at tiny width; "odd" has odd sizes and a different grouping.
func towerGeometryLike() drama3.AudioConfig {
	return drama3.AudioConfig{Dim: 48, NumHeads: 4, NumKVHeads: 2, HeadDim: 128, IntermediateSize: 40, NormEps: 1e-6,
		RotaryPercent: 0.5, RopeBase: 1e7, SharedLayers: 4, NumCodebooks: 10, SemanticCodebookSize: 33, CodebookSize: 17}
}

func towerGeometryOdd() drama3.AudioConfig {
	return drama3.AudioConfig{Dim: 21, NumHeads: 3, NumKVHeads: 1, HeadDim: 10, IntermediateSize: 13, NormEps: 1e-5,
		RotaryPercent: 0.6, RopeBase: 1e4, SharedLayers: 2, NumCodebooks: 3, SemanticCodebookSize: 11, CodebookSize: 7}
}

func randomTower(g drama3.AudioConfig, seed uint64) *testTower {
	r := rand.New(rand.NewPCG(seed, 11))
	vec := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * s)
		}
		return v
	}
	gain := func(n int) []float32 {
		v := vec(n, 0.2)
		for i := range v {
			v[i] += 1
		}
		return v
	}
	mat := func(out, in int) []float32 { return vec(out*in, 1/math.Sqrt(float64(in))) }
	w := &testTower{Geometry: g}
	for i := 0; i < g.NumCodebooks; i++ {
		w.Embeddings = append(w.Embeddings, vec(g.CodebookEntries(i)*g.Dim, 1))
	}
	D, hd := g.Dim, g.HeadDim
	layer := func(headRows int) drama3.TowerLayer[[]float32] {
		l := drama3.TowerLayer[[]float32]{
			ENorm: gain(D), HNorm: gain(D), EHProj: mat(D, 2*D), AttentionNorm: gain(D),
			WQKV: mat((g.NumHeads+2*g.NumKVHeads)*hd, D), WO: mat(D, g.NumHeads*hd), FFNNorm: gain(D),
			W1: mat(g.IntermediateSize, D), W3: mat(g.IntermediateSize, D), W2: mat(D, g.IntermediateSize), OutNorm: gain(D),
		}
		if headRows > 0 {
			l.Head = mat(headRows, D)
		}
		return l
	}
	for i := 0; i < g.SharedLayers; i++ {
		w.Shared = append(w.Shared, layer(0))
	}
	for j := 1; j < g.NumCodebooks; j++ {
		w.Residual = append(w.Residual, layer(g.CodebookEntries(j)))
	}
	return w
}

// towerRow is one row of a reference sequence: the backbone hidden state and,
// for an audio row, its codes (nil for a text row).
type towerRow struct {
	hidden []float64
	codes  []int
}

// referenceTower recomputes the whole sequence from scratch in float64,
// straight from the formula, with no caches: it returns, for every audio row,
// the logits of codebooks 1..n−1.
func referenceTower(w *testTower, rows []towerRow) [][][]float64 {
	g := &w.Geometry
	D, hd, nh, nkv := g.Dim, g.HeadDim, g.NumHeads, g.NumKVHeads
	N := len(rows)
	f64 := func(v []float32) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	norm := func(x []float64, wt []float32) []float64 {
		var ss float64
		for _, v := range x {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(len(x))+float64(float32(g.NormEps)))
		out := make([]float64, len(x))
		for i := range x {
			out[i] = x[i] * inv * float64(wt[i])
		}
		return out
	}
	matvec := func(m []float32, x []float64, rowsOut int) []float64 {
		cols := len(x)
		out := make([]float64, rowsOut)
		for r := range out {
			for c := 0; c < cols; c++ {
				out[r] += float64(m[r*cols+c]) * x[c]
			}
		}
		return out
	}
	rope := func(x []float64, pos int) {
		for i := 0; i < g.RotaryDim()/2; i++ {
			a := float64(pos) * math.Pow(g.RopeBase, -float64(2*i)/float64(g.RotaryDim()))
			c, s := math.Cos(a), math.Sin(a)
			x0, x1 := x[2*i], x[2*i+1]
			x[2*i], x[2*i+1] = x0*c-x1*s, x0*s+x1*c
		}
	}

	h := make([][]float64, N)
	for r := range rows {
		h[r] = rows[r].hidden
	}
	logits := make([][][]float64, N)
	layers := append(append([]drama3.TowerLayer[[]float32](nil), w.Shared...), w.Residual...)
	for li, lw := range layers {
		cb := 0 // codebook embedded by this layer
		if li >= g.SharedLayers {
			cb = li - g.SharedLayers
		}
		x := make([][]float64, N)
		q := make([][]float64, N)
		k := make([][]float64, N)
		v := make([][]float64, N)
		for r := range rows {
			e := make([]float64, D)
			if rows[r].codes != nil {
				code := rows[r].codes[cb]
				e = f64(w.Embeddings[cb][code*D : (code+1)*D])
			}
			cat := append(norm(e, lw.ENorm), norm(h[r], lw.HNorm)...)
			x[r] = matvec(lw.EHProj, cat, D)
			qkv := matvec(lw.WQKV, norm(x[r], lw.AttentionNorm), (nh+2*nkv)*hd)
			for hh := 0; hh < nh+nkv; hh++ {
				rope(qkv[hh*hd:(hh+1)*hd], r)
			}
			q[r], k[r], v[r] = qkv[:nh*hd], qkv[nh*hd:(nh+nkv)*hd], qkv[(nh+nkv)*hd:]
		}
		for r := range rows {
			att := causalAttention64(q, k, v, r, nh, nkv, hd)
			o := matvec(lw.WO, att, D)
			for i := range o {
				x[r][i] += o[i]
			}
			f := norm(x[r], lw.FFNNorm)
			gt, up := matvec(lw.W1, f, g.IntermediateSize), matvec(lw.W3, f, g.IntermediateSize)
			for i := range gt {
				gt[i] = gt[i] / (1 + math.Exp(-gt[i])) * up[i]
			}
			dn := matvec(lw.W2, gt, D)
			for i := range dn {
				x[r][i] += dn[i]
			}
			h[r] = norm(x[r], lw.OutNorm)
			if li >= g.SharedLayers && rows[r].codes != nil {
				j := li - g.SharedLayers + 1
				logits[r] = append(logits[r], matvec(lw.Head, h[r], g.CodebookEntries(j)))
			}
		}
	}
	return logits
}

// The incremental tower (text prefill, then audio rows layer by layer with
// caches) matches a from-scratch float64 evaluation of the formula.
func TestTowerMatchesFloat64Reference(t *testing.T) {
	for name, g := range map[string]drama3.AudioConfig{"like": towerGeometryLike(), "odd": towerGeometryOdd()} {
		t.Run(name, func(t *testing.T) {
			w := randomTower(g, 3)
			r := rand.New(rand.NewPCG(9, 9))
			const textRows, audioRows = 5, 4
			var rows []towerRow
			for i := 0; i < textRows+audioRows; i++ {
				hid := make([]float64, g.Dim)
				for d := range hid {
					hid[d] = float64(float32(r.NormFloat64()))
				}
				row := towerRow{hidden: hid}
				if i >= textRows {
					for cb := 0; cb < g.NumCodebooks; cb++ {
						row.codes = append(row.codes, r.IntN(g.CodebookEntries(cb)))
					}
				}
				rows = append(rows, row)
			}
			want := referenceTower(w, rows)

			tw, err := newTestTower(w)
			if err != nil {
				t.Fatal(err)
			}
			f32 := func(v []float64) []float32 {
				out := make([]float32, len(v))
				for i, x := range v {
					out[i] = float32(x)
				}
				return out
			}
			var text []float32
			for _, row := range rows[:textRows] {
				text = append(text, f32(row.hidden)...)
			}
			if err := tw.Text(text, textRows); err != nil {
				t.Fatal(err)
			}
			for i, row := range rows[textRows:] {
				if err := tw.Shared(f32(row.hidden), row.codes[0]); err != nil {
					t.Fatal(err)
				}
				for j := 1; j < g.NumCodebooks; j++ {
					logits := make([]float32, g.CodebookEntries(j))
					if err := tw.Residual(j, row.codes[j-1], logits); err != nil {
						t.Fatal(err)
					}
					if e := relErr(logits, want[textRows+i][j-1]); !(e <= 1e-4) {
						t.Errorf("audio row %d codebook %d: relative error %.2e", i, j, e)
					}
				}
			}
			if tw.Len() != textRows+audioRows {
				t.Errorf("Len %d, want %d", tw.Len(), textRows+audioRows)
			}
		})
	}
}

// Prefilling text rows in one batch or one at a time gives bit-identical
// caches: the logits that follow are equal.
func TestTowerTextBatchEqualsRowByRow(t *testing.T) {
	g := towerGeometryOdd()
	w := randomTower(g, 5)
	r := rand.New(rand.NewPCG(1, 2))
	hidden := make([]float32, 6*g.Dim)
	for i := range hidden {
		hidden[i] = float32(r.NormFloat64())
	}
	run := func(batch int) []float32 {
		tw, err := newTestTower(w)
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < 5; lo += batch {
			hi := min(lo+batch, 5)
			if err := tw.Text(hidden[lo*g.Dim:hi*g.Dim], hi-lo); err != nil {
				t.Fatal(err)
			}
		}
		if err := tw.Shared(hidden[5*g.Dim:], 3); err != nil {
			t.Fatal(err)
		}
		var all []float32
		prev := 3
		for j := 1; j < g.NumCodebooks; j++ {
			l := make([]float32, g.CodebookEntries(j))
			if err := tw.Residual(j, prev, l); err != nil {
				t.Fatal(err)
			}
			all = append(all, l...)
			prev = j
		}
		return all
	}
	a, b := run(5), run(1)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("logit %d: batch %v, row by row %v", i, a[i], b[i])
		}
	}
}

func TestTowerRefusesMisuse(t *testing.T) {
	g := towerGeometryOdd()
	w := randomTower(g, 1)
	tw, err := newTestTower(w)
	if err != nil {
		t.Fatal(err)
	}
	hid := make([]float32, g.Dim)
	logits := make([]float32, g.CodebookEntries(1))
	cases := []struct {
		name string
		do   func() error
		want string
	}{
		{"residual before shared", func() error { return tw.Residual(1, 0, logits) }, "out of order"},
		{"code out of range", func() error { return tw.Shared(hid, g.CodebookEntries(0)) }, "outside codebook 0"},
		{"negative code", func() error { return tw.Shared(hid, -1) }, "outside codebook 0"},
		{"short hidden", func() error { return tw.Shared(hid[1:], 0) }, "hidden state has"},
		{"text size", func() error { return tw.Text(hid, 2) }, "hidden values for 2 rows"},
	}
	for _, c := range cases {
		if err := c.do(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	if tw.Len() != 0 {
		t.Fatalf("a refused call changed the tower: Len %d", tw.Len())
	}
	if err := tw.Shared(hid, 1); err != nil {
		t.Fatal(err)
	}
	if err := tw.Residual(2, 0, make([]float32, g.CodebookEntries(2))); err == nil {
		t.Error("residual layer 2 before 1 accepted")
	}
	if err := tw.Text(hid, 1); err == nil {
		t.Error("text row in the middle of an audio row accepted")
	}
	if err := tw.Residual(1, g.CodebookEntries(0), logits); err == nil {
		t.Error("residual layer 1 accepted a code outside codebook 0")
	}

	bad := randomTower(g, 1)
	bad.Residual[1].Head = bad.Residual[1].Head[1:]
	if _, err := newTestTower(bad); err == nil || !strings.Contains(err.Error(), "audio_decoder_mtp.layers.1.head") {
		t.Errorf("short head: error %v", err)
	}
}

// The exported table is what the rotation uses: rotating (1, 0) pairs gives
// (cos, sin); and position 0 is the identity, pair i at position p turns by
// p·theta^(−2i/dim).
func TestTowerRopeTable(t *testing.T) {
	const dim, rows = 8, 5
	cos, sin := drama3.TowerRopeTable(dim, 1e7, rows)
	r := drama3.NewInterleavedRope(dim, 1e7)
	for p := 0; p < rows; p++ {
		x := []float32{1, 0, 1, 0, 1, 0, 1, 0, 7}
		r.Apply(x, p)
		for i := 0; i < dim/2; i++ {
			if x[2*i] != cos[p*dim/2+i] || x[2*i+1] != sin[p*dim/2+i] {
				t.Fatalf("pos %d pair %d: rotated (1,0) to (%v,%v), table (%v,%v)", p, i, x[2*i], x[2*i+1], cos[p*dim/2+i], sin[p*dim/2+i])
			}
			a := float64(p) * math.Pow(1e7, -float64(2*i)/dim)
			if math.Abs(float64(cos[p*dim/2+i])-math.Cos(a)) > 1e-7 || math.Abs(float64(sin[p*dim/2+i])-math.Sin(a)) > 1e-7 {
				t.Fatalf("pos %d pair %d: table (%v,%v), angle %v", p, i, cos[p*dim/2+i], sin[p*dim/2+i], a)
			}
		}
		if x[8] != 7 {
			t.Fatal("a dim past the rotary dims changed")
		}
	}
}

package cpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// Test geometries: "like" has the real model's head_dim 256 and partial
// rotary 0.25 at tiny width; "odd" has odd sizes everywhere the math allows.
func geometryLike() BackboneGeometry {
	return BackboneGeometry{
		Hidden: 64, Vocab: 97, Eps: 1e-6,
		Layers: []LayerKind{LinearAttention, LinearAttention, LinearAttention, FullAttention},
		Heads:  4, KVHeads: 2, HeadDim: 256, RotaryDim: 64, RopeTheta: 1e7,
		LinKeyHeads: 2, LinValueHeads: 4, LinKeyDim: 32, LinValueDim: 32, ConvKernel: 4,
		Experts: 8, TopK: 2, ExpertFFN: 32, SharedFFN: 32,
	}
}

func geometryOdd() BackboneGeometry {
	return BackboneGeometry{
		Hidden: 45, Vocab: 61, Eps: 1e-5,
		Layers: []LayerKind{FullAttention, LinearAttention, LinearAttention},
		Heads:  3, KVHeads: 1, HeadDim: 22, RotaryDim: 10, RopeTheta: 1e4,
		LinKeyHeads: 1, LinValueHeads: 3, LinKeyDim: 13, LinValueDim: 11, ConvKernel: 3,
		Experts: 5, TopK: 3, ExpertFFN: 19, SharedFFN: 23,
	}
}

// randomBackbone draws weights with unit-variance activations in mind
// (matrices scaled by 1/sqrt(in), norm gains around their neutral value).
func randomBackbone(g BackboneGeometry, seed uint64) *BackboneWeights {
	r := rand.New(rand.NewPCG(seed, 7))
	mat := func(out, in int) []float32 {
		v := randVec(r, out*in)
		s := float32(1 / math.Sqrt(float64(in)))
		for i := range v {
			v[i] *= s
		}
		return v
	}
	small := func(n int, s float32) []float32 {
		v := randVec(r, n)
		for i := range v {
			v[i] *= s
		}
		return v
	}
	ffn := func(f int) ExpertWeights {
		return ExpertWeights{Gate: mat(f, g.Hidden), Up: mat(f, g.Hidden), Down: mat(g.Hidden, f)}
	}
	w := &BackboneWeights{Geometry: g, Embed: small(g.Vocab*g.Hidden, 1), FinalNorm: small(g.Hidden, 0.1)}
	for _, kind := range g.Layers {
		l := BackboneLayerWeights{InputNorm: small(g.Hidden, 0.1), PostNorm: small(g.Hidden, 0.1)}
		switch kind {
		case LinearAttention:
			ch, vd := deltaNetChannels(&g), g.LinValueHeads*g.LinValueDim
			dn := &DeltaNetWeights{
				InProjQKV: mat(ch, g.Hidden), InProjZ: mat(vd, g.Hidden),
				InProjB: mat(g.LinValueHeads, g.Hidden), InProjA: mat(g.LinValueHeads, g.Hidden),
				Conv: mat(ch, g.ConvKernel), DtBias: small(g.LinValueHeads, 1),
				ALog: make([]float32, g.LinValueHeads), Norm: small(g.LinValueDim, 1),
				OutProj: mat(g.Hidden, vd),
			}
			for i := range dn.ALog {
				dn.ALog[i] = float32(math.Log(0.01 + 4*r.Float64()))
			}
			l.DeltaNet = dn
		case FullAttention:
			hd := g.HeadDim
			l.Attention = &AttentionWeights{
				Q: mat(g.Heads*2*hd, g.Hidden), K: mat(g.KVHeads*hd, g.Hidden), V: mat(g.KVHeads*hd, g.Hidden),
				O: mat(g.Hidden, g.Heads*hd), QNorm: small(hd, 0.1), KNorm: small(hd, 0.1),
			}
		}
		l.MoE = MoEWeights{Router: mat(g.Experts, g.Hidden), Shared: ffn(g.SharedFFN), SharedGate: mat(1, g.Hidden)}
		for e := 0; e < g.Experts; e++ {
			l.MoE.Experts = append(l.MoE.Experts, ffn(g.ExpertFFN))
		}
		w.Layers = append(w.Layers, l)
	}
	return w
}

func randomIDs(r *rand.Rand, n, vocab int) []int {
	ids := make([]int, n)
	for i := range ids {
		ids[i] = r.IntN(vocab)
	}
	return ids
}

// maxRowErr is the largest per-row relative error of got against want, both
// [rows, width].
func maxRowErr(got, want []float32, width int) (float64, int) {
	worst, at := 0.0, -1
	for r := 0; r*width < len(want); r++ {
		e := relErr(got[r*width:(r+1)*width], want[r*width:(r+1)*width])
		if !(e <= worst) {
			worst, at = e, r
		}
	}
	return worst, at
}

// runSplits runs ids through a fresh backbone in the given group sizes
// (1 = a one-row step) and returns all rows' outputs.
func runSplits(t *testing.T, w *BackboneWeights, ids []int, splits []int) []float32 {
	t.Helper()
	b, err := NewBackbone(w)
	if err != nil {
		t.Fatal(err)
	}
	var out []float32
	at := 0
	for _, s := range splits {
		h, err := b.Run(TokenRows(ids[at : at+s]))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h...)
		at += s
	}
	if at != len(ids) || b.Len() != len(ids) {
		t.Fatalf("splits cover %d rows, backbone has %d, want %d", at, b.Len(), len(ids))
	}
	return out
}

// TestBackboneIncrementalMatchesWhole checks that appending rows one at a
// time (the DeltaNet recurrence) or in uneven groups (chunked with a carried
// state) gives the whole-sequence prefill's hidden states.
func TestBackboneIncrementalMatchesWhole(t *testing.T) {
	for name, g := range map[string]BackboneGeometry{"like": geometryLike(), "odd": geometryOdd()} {
		t.Run(name, func(t *testing.T) {
			w := randomBackbone(g, 3)
			r := rand.New(rand.NewPCG(4, 5))
			ids := randomIDs(r, 150, g.Vocab)
			whole := runSplits(t, w, ids, []int{150})
			ones := make([]int, 150)
			for i := range ones {
				ones[i] = 1
			}
			cases := map[string][]int{
				"prefill 70 then steps": append([]int{70}, ones[:80]...),
				"all steps":             ones,
				"uneven groups":         {1, 63, 2, 64, 5, 1, 14},
			}
			for cname, splits := range cases {
				got := runSplits(t, w, ids, splits)
				if e, row := maxRowErr(got, whole, g.Hidden); !(e < 1e-5) {
					t.Errorf("%s: row %d relative error %g against the whole prefill", cname, row, e)
				}
			}
		})
	}
}

func TestBackboneRunRejectsBadRows(t *testing.T) {
	g := geometryOdd()
	b, err := NewBackbone(randomBackbone(g, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rows []BackboneRow
		want string
	}{
		{[]BackboneRow{{Token: 0}, {Token: g.Vocab}}, "token id 61 outside"},
		{[]BackboneRow{{Token: -1}}, "token id -1 outside"},
		{[]BackboneRow{{Embedding: make([]float32, g.Hidden+1)}}, "embedding has 46 values"},
	} {
		_, err := b.Run(c.rows)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Run(%v): error %v, want one containing %q", c.rows, err, c.want)
		}
		if b.Len() != 0 {
			t.Fatalf("a rejected Run appended rows: Len %d", b.Len())
		}
	}
}

// TestBackboneEmbeddingRows checks that a given embedding equal to a token's
// embedding row gives that token's output.
func TestBackboneEmbeddingRows(t *testing.T) {
	g := geometryOdd()
	w := randomBackbone(g, 2)
	ids := []int{5, 9, 11, 3}
	want := runSplits(t, w, ids, []int{4})
	b, _ := NewBackbone(w)
	rows := TokenRows(ids)
	rows[2] = BackboneRow{Embedding: w.Embed[11*g.Hidden : 12*g.Hidden]}
	got, err := b.Run(rows)
	if err != nil {
		t.Fatal(err)
	}
	if e, row := maxRowErr(got, want, g.Hidden); e != 0 {
		t.Errorf("row %d differs by %g", row, e)
	}
}

func TestBackboneWeightsCheck(t *testing.T) {
	g := geometryOdd()
	w := randomBackbone(g, 1)
	if err := w.Check(); err != nil {
		t.Fatalf("valid weights: %v", err)
	}
	w.Layers[1].DeltaNet.Conv = w.Layers[1].DeltaNet.Conv[1:]
	if err := w.Check(); err == nil || !strings.Contains(err.Error(), "layers.1.linear_attn.conv1d") {
		t.Errorf("short conv1d: error %v", err)
	}
	w = randomBackbone(g, 1)
	w.Layers[2].MoE.Experts[4].Down = nil
	if err := w.Check(); err == nil || !strings.Contains(err.Error(), "layers.2.mlp.experts.4.down_proj") {
		t.Errorf("missing expert: error %v", err)
	}
	bad := g
	bad.KVHeads = 2
	w = randomBackbone(bad, 1)
	if err := w.Check(); err == nil || !strings.Contains(err.Error(), "num_key_value_heads") {
		t.Errorf("3 heads over 2 KV heads: error %v", err)
	}
}

// TestBackboneIndependentOfWorkers checks that the outputs are bit-identical
// whatever the number of goroutines: every sum has a fixed order, so the
// CUDA comparisons can rely on one reference value.
func TestBackboneIndependentOfWorkers(t *testing.T) {
	g := geometryLike()
	w := randomBackbone(g, 5)
	ids := randomIDs(rand.New(rand.NewPCG(6, 7)), 80, g.Vocab)
	prev := runtime.GOMAXPROCS(1)
	one := runSplits(t, w, ids, []int{70, 1, 9})
	runtime.GOMAXPROCS(4)
	four := runSplits(t, w, ids, []int{70, 1, 9})
	runtime.GOMAXPROCS(prev)
	for i := range one {
		if math.Float32bits(one[i]) != math.Float32bits(four[i]) {
			t.Fatalf("value %d: %g with 1 worker, %g with 4", i, one[i], four[i])
		}
	}
}

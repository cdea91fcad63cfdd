package cpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"proscenium/engine/drama3"
)

// Test geometries: "like" has the real model's head_dim 256 and partial
// rotary 0.25 at tiny width; "odd" has odd sizes everywhere the math allows.
func geometryLike() drama3.TextConfig {
	return drama3.TextConfig{
		HiddenSize: 64, VocabSize: 97, RMSNormEps: 1e-6, NumLayers: 4,
		LayerTypes: []drama3.LayerType{drama3.LinearAttention, drama3.LinearAttention, drama3.LinearAttention, drama3.FullAttention},
		NumHeads:   4, NumKVHeads: 2, HeadDim: 256, PartialRotaryFactor: 0.25, RopeTheta: 1e7,
		LinearNumKeyHeads: 2, LinearNumValueHeads: 4, LinearKeyHeadDim: 32, LinearValueHeadDim: 32, ConvKernel: 4,
		NumExperts: 8, NumExpertsPerTok: 2, MoEIntermediate: 32, SharedIntermediate: 32,
	}
}

func geometryOdd() drama3.TextConfig {
	return drama3.TextConfig{
		HiddenSize: 45, VocabSize: 61, RMSNormEps: 1e-5, NumLayers: 3,
		LayerTypes: []drama3.LayerType{drama3.FullAttention, drama3.LinearAttention, drama3.LinearAttention},
		NumHeads:   3, NumKVHeads: 1, HeadDim: 22, PartialRotaryFactor: 10.0 / 22, RopeTheta: 1e4,
		LinearNumKeyHeads: 1, LinearNumValueHeads: 3, LinearKeyHeadDim: 13, LinearValueHeadDim: 11, ConvKernel: 3,
		NumExperts: 5, NumExpertsPerTok: 3, MoEIntermediate: 19, SharedIntermediate: 23,
	}
}

// randomBackbone draws weights with unit-variance activations in mind
// (matrices scaled by 1/sqrt(in), norm gains around their neutral value).
func randomBackbone(g drama3.TextConfig, seed uint64) *testBackbone {
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
	ffn := func(f int) drama3.Expert[[]float32] {
		return drama3.Expert[[]float32]{Gate: mat(f, g.HiddenSize), Up: mat(f, g.HiddenSize), Down: mat(g.HiddenSize, f)}
	}
	w := &testBackbone{Geometry: g}
	w.Embed, w.FinalNorm = small(g.VocabSize*g.HiddenSize, 1), small(g.HiddenSize, 0.1)
	for _, kind := range g.LayerTypes {
		l := drama3.Layer[[]float32]{Kind: kind, InputNorm: small(g.HiddenSize, 0.1), PostAttentionNorm: small(g.HiddenSize, 0.1)}
		switch kind {
		case drama3.LinearAttention:
			ch, vd := deltaNetChannels(&g), g.LinearNumValueHeads*g.LinearValueHeadDim
			dn := &drama3.DeltaNet[[]float32]{
				InProjQKV: mat(ch, g.HiddenSize), InProjZ: mat(vd, g.HiddenSize),
				InProjB: mat(g.LinearNumValueHeads, g.HiddenSize), InProjA: mat(g.LinearNumValueHeads, g.HiddenSize),
				Conv1D: mat(ch, g.ConvKernel), DtBias: small(g.LinearNumValueHeads, 1),
				ALog: make([]float32, g.LinearNumValueHeads), Norm: small(g.LinearValueHeadDim, 1),
				OutProj: mat(g.HiddenSize, vd),
			}
			for i := range dn.ALog {
				dn.ALog[i] = float32(math.Log(0.01 + 4*r.Float64()))
			}
			l.Linear = dn
		case drama3.FullAttention:
			hd := g.HeadDim
			l.Full = &drama3.Attention[[]float32]{
				QProj: mat(g.NumHeads*2*hd, g.HiddenSize), KProj: mat(g.NumKVHeads*hd, g.HiddenSize), VProj: mat(g.NumKVHeads*hd, g.HiddenSize),
				OProj: mat(g.HiddenSize, g.NumHeads*hd), QNorm: small(hd, 0.1), KNorm: small(hd, 0.1),
			}
		}
		sh := ffn(g.SharedIntermediate)
		l.MoE = drama3.MoE[[]float32]{Router: mat(g.NumExperts, g.HiddenSize), SharedGate: sh.Gate, SharedUp: sh.Up, SharedDown: sh.Down,
			SharedExpertGate: mat(1, g.HiddenSize)}
		for e := 0; e < g.NumExperts; e++ {
			l.MoE.Experts = append(l.MoE.Experts, ffn(g.MoEIntermediate))
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
func runSplits(t *testing.T, w *testBackbone, ids []int, splits []int) []float32 {
	t.Helper()
	b, err := newTestBackbone(w)
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
	for name, g := range map[string]drama3.TextConfig{"like": geometryLike(), "odd": geometryOdd()} {
		t.Run(name, func(t *testing.T) {
			w := randomBackbone(g, 3)
			r := rand.New(rand.NewPCG(4, 5))
			ids := randomIDs(r, 150, g.VocabSize)
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
				if e, row := maxRowErr(got, whole, g.HiddenSize); !(e < 1e-5) {
					t.Errorf("%s: row %d relative error %g against the whole prefill", cname, row, e)
				}
			}
		})
	}
}

func TestBackboneRunRejectsBadRows(t *testing.T) {
	g := geometryOdd()
	b, err := newTestBackbone(randomBackbone(g, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rows []BackboneRow
		want string
	}{
		{[]BackboneRow{{Token: 0}, {Token: g.VocabSize}}, "token id 61 outside"},
		{[]BackboneRow{{Token: -1}}, "token id -1 outside"},
		{[]BackboneRow{{Embedding: make([]float32, g.HiddenSize+1)}}, "embedding has 46 values"},
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
	b, _ := newTestBackbone(w)
	rows := TokenRows(ids)
	rows[2] = BackboneRow{Embedding: w.Embed[11*g.HiddenSize : 12*g.HiddenSize]}
	got, err := b.Run(rows)
	if err != nil {
		t.Fatal(err)
	}
	if e, row := maxRowErr(got, want, g.HiddenSize); e != 0 {
		t.Errorf("row %d differs by %g", row, e)
	}
}

func TestBackboneWeightsCheck(t *testing.T) {
	g := geometryOdd()
	w := randomBackbone(g, 1)
	if _, err := newTestBackbone(w); err != nil {
		t.Fatalf("valid weights: %v", err)
	}
	w.Layers[1].Linear.Conv1D = w.Layers[1].Linear.Conv1D[1:]
	if _, err := newTestBackbone(w); err == nil || !strings.Contains(err.Error(), "layers.1.linear_attn.conv1d") || !strings.Contains(err.Error(), "linear_conv_kernel_dim") {
		t.Errorf("short conv1d: error %v", err)
	}
	w = randomBackbone(g, 1)
	w.Layers[2].MoE.Experts[4].Down = nil
	if _, err := newTestBackbone(w); err == nil || !strings.Contains(err.Error(), "layers.2.mlp.experts.4.down_proj") {
		t.Errorf("missing expert: error %v", err)
	}
	w = randomBackbone(g, 1)
	w.Layers[0].Full, w.Layers[0].Linear = nil, w.Layers[1].Linear
	if _, err := newTestBackbone(w); err == nil || !strings.Contains(err.Error(), "layer_types[0] is full_attention") {
		t.Errorf("wrong mixer: error %v", err)
	}
}

// TestBackboneIndependentOfWorkers checks that the outputs are bit-identical
// whatever the number of goroutines: every sum has a fixed order, so the
// CUDA comparisons can rely on one reference value.
func TestBackboneIndependentOfWorkers(t *testing.T) {
	g := geometryLike()
	w := randomBackbone(g, 5)
	ids := randomIDs(rand.New(rand.NewPCG(6, 7)), 80, g.VocabSize)
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

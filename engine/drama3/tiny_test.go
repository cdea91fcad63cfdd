package drama3

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"proscenium/engine/demo"
	"proscenium/engine/internal/testutil"
	"proscenium/engine/tokenizer"
)

// baseTokenizer reads the npm Qwen tokenizer.json, or skips (fails in CI).
func baseTokenizer(t testing.TB) []byte {
	t.Helper()
	return testutil.ReadFoundFile(t, FindBaseTokenizer)
}

func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func TestWriteTiny(t *testing.T) {
	t.Parallel() // each write spends most of its time waiting for fsync
	base := baseTokenizer(t)
	d1, d2 := t.TempDir(), t.TempDir()
	for _, dir := range []string{d1, d2} {
		// Forget the cached tokenizer so the second write rebuilds every file.
		tokenizerCache.Lock()
		tokenizerCache.json = nil
		tokenizerCache.Unlock()
		if err := WriteTiny(dir, TinyOptions{Seed: 7, BaseTokenizer: base}); err != nil {
			t.Fatal(err)
		}
	}
	f1, f2 := dirFiles(t, d1), dirFiles(t, d2)
	var names []string
	for n := range f1 {
		names = append(names, n)
	}
	sort.Strings(names)
	shards := 0
	for _, n := range names {
		if !bytes.Equal(f1[n], f2[n]) {
			t.Errorf("%s differs between two writes with the same seed", n)
		}
		if filepath.Ext(n) == ".safetensors" {
			shards++
		}
	}
	if len(f1) != len(f2) || shards < 2 {
		t.Errorf("files %v (%d shards), second write %d files", names, shards, len(f2))
	}
	if !bytes.Equal(f1["codec.pth"], demo.CodecPTH) {
		t.Error("codec.pth is not the demo codec")
	}

	ck, err := Load(d1)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	if len(ck.Report.Unplaced) != 0 || len(ck.Report.Missing) != 0 {
		t.Fatalf("unplaced %v missing %v", ck.Report.Unplaced, ck.Report.Missing)
	}
	cfg := ck.Config
	if got := cfg.Text.LayerTypes; len(got) != 4 || got[0] != LinearAttention || got[2] != LinearAttention || got[3] != FullAttention {
		t.Errorf("layer types %v", got)
	}

	// Another seed changes every random tensor.
	cfg8 := *cfg
	a, err := tinyTensors(cfg, 7, false, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := tinyTensors(&cfg8, 8, false, false)
	for i := range a {
		if bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("%s identical for seeds 7 and 8", a[i].Name)
		}
	}

	t.Run("tokenizer", func(t *testing.T) {
		// The tokenizer holds the Drama 3 tokens inside the embedding's rows.
		tok, err := tokenizer.Parse(f1["tokenizer.json"])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"<|im_end|>", "<|voice|>", "<|text|>", "<|interleave|>", "<|speaker:15|>", "<|semantic:0|>", "<|semantic:4095|>"} {
			id, ok := tok.TokenID(s)
			if !ok || id >= cfg.Text.VocabSize {
				t.Errorf("token %s: id %d ok %v, vocab %d", s, id, ok, cfg.Text.VocabSize)
			}
		}
		if _, ok := tok.TokenID("<|speaker:16|>"); ok {
			t.Error("<|speaker:16|> exists")
		}
		if cfg.Text.VocabSize < tok.VocabSize() || cfg.Text.VocabSize%64 != 0 {
			t.Errorf("vocab %d for %d tokens", cfg.Text.VocabSize, tok.VocabSize())
		}
	})

	// Every FP8 block's largest dequantised magnitude is 448 × its scale
	// (the writer scales each block to the E4M3 range): this holds only if
	// the reader applies each block's own scale, ragged last blocks included.
	t.Run("fp8 blocks", func(t *testing.T) {
		w := ck.Weights
		for _, p := range []*Param{w.Layers[0].MoE.Experts[2].Gate, w.Layers[3].MoE.Experts[7].Down} {
			if p.Scale == nil {
				t.Fatalf("%s has no scale", p.Name)
			}
			rows, cols := p.Shape[0], p.Shape[1]
			sr, sc := ceilDiv(rows, 128), ceilDiv(cols, 128)
			if sr*sc < 2 {
				t.Fatalf("%s %v spans one block", p.Name, p.Shape)
			}
			deq, err := w.Float32(p)
			if err != nil {
				t.Fatal(err)
			}
			st, err := w.Read(p.Scale)
			if err != nil {
				t.Fatal(err)
			}
			scales, _ := st.Float32s()
			for bi := 0; bi < sr; bi++ {
				for bj := 0; bj < sc; bj++ {
					var amax float32
					for i := bi * 128; i < min(rows, (bi+1)*128); i++ {
						for j := bj * 128; j < min(cols, (bj+1)*128); j++ {
							amax = max(amax, float32(math.Abs(float64(deq[i*cols+j]))))
						}
					}
					if want := 448 * scales[bi*sc+bj]; amax != want {
						t.Errorf("%s block (%d,%d): max |w| %v, want 448×scale %v", p.Name, bi, bj, amax, want)
					}
				}
			}
		}
		// The float32 tree gives the same matrices as the per-tensor reader.
		m, err := w.Float32Model()
		if err != nil {
			t.Fatal(err)
		}
		d7, _ := w.Float32(w.Layers[3].MoE.Experts[7].Down)
		if len(m.Layers[3].MoE.Experts) != 8 || !slices.Equal(ExpertSlices(&m.Layers[3].MoE, 7, &w.Config.Text).Down, d7) {
			t.Error("the float32 tree disagrees with Float32")
		}
	})
}

func rms(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s / float64(len(v)))
}

func mean(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x)
	}
	return s / float64(len(v))
}

// The odd geometry in the fused expert layout loads, its fused experts read
// like per-expert ones would, and values have the intended magnitudes.
func TestTinyOddFusedLoads(t *testing.T) {
	t.Parallel() // each write spends most of its time waiting for fsync
	base := baseTokenizer(t)
	dir := t.TempDir()
	if err := WriteTiny(dir, TinyOptions{Seed: 1, Config: TinyOddConfig(), BaseTokenizer: base, FusedExperts: true, SemanticHead: true}); err != nil {
		t.Fatal(err)
	}
	ck, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	w := ck.Weights
	if !w.Layers[0].MoE.Fused || w.LMHead == w.Embed || w.LMHead.Name != "lm_head.weight" {
		t.Fatalf("fused %v, LM head %s", w.Layers[0].MoE.Fused, w.LMHead.Name)
	}
	if w.SemanticHead == nil || !slices.Equal(w.SemanticHead.Shape, []int{4097, 136}) || len(ck.Report.Unplaced) != 0 {
		t.Fatalf("semantic head %+v, unplaced %v", w.SemanticHead, ck.Report.Unplaced)
	}
	m, err := w.Float32Model()
	if err != nil {
		t.Fatal(err)
	}
	size := func(v []float32) int { return len(v) }
	if err := CheckBackbone(&w.Config.Text, &m.Backbone, size); err != nil {
		t.Fatal(err)
	}
	if err := CheckTower(&w.Config.Audio, 136, &m.Tower, size); err != nil {
		t.Fatal(err)
	}
	if &m.LMHead[0] == &m.Embed[0] || &m.Tower.Embeddings[0][0] == &m.Embed[0] {
		t.Fatal("untied LM head or codebook table shares the embedding's storage")
	}
	ex := func(e int) Expert[[]float32] { return ExpertSlices(&m.Layers[1].MoE, e, &w.Config.Text) }
	H, I := 136, 40
	if len(ex(5).Up) != I*H || len(ex(5).Down) != H*I {
		t.Fatalf("expert sizes %d %d", len(ex(5).Up), len(ex(5).Down))
	}
	// Gate rows come first in gate_up: expert 0's gate is the first I rows.
	all, err := w.Float32(w.Layers[1].MoE.GateUp)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ex(0).Gate, all[:I*H]) || !slices.Equal(ex(0).Up, all[I*H:2*I*H]) || !slices.Equal(ex(1).Gate, all[2*I*H:3*I*H]) {
		t.Error("fused gate/up split is not gate rows then up rows per expert")
	}

	cases := []struct {
		p        *Param
		rms, avg float64 // expected (±25 %), mean (±0.05)
	}{
		{w.Embed, 1 / math.Sqrt(136), 0},
		{w.Layers[0].InputNorm, 0.05, 0},
		{w.Layers[0].Linear.Norm, 1, 1},
		{w.Layers[3].Full.OProj, 1 / math.Sqrt(72), 0},
		{w.Tower.Residual[4].OutNorm, 1, 1},
		{w.Tower.Residual[4].Head, 1 / math.Sqrt(136), 0},
		{w.SemanticHead, 1 / math.Sqrt(136), 0},
	}
	for _, c := range cases {
		v, err := w.Float32(c.p)
		if err != nil {
			t.Fatal(err)
		}
		if r, m := rms(v), mean(v); math.Abs(r-c.rms) > 0.25*c.rms || math.Abs(m-c.avg) > 0.05 {
			t.Errorf("%s: rms %.4f mean %.4f, want about %.4f and %.2f", c.p.Name, r, m, c.rms, c.avg)
		}
	}
	// g = −exp(A_log)·softplus(a + dt_bias): A in [1, 16], softplus(dt_bias) in [0.001, 0.1].
	alog, _ := w.Float32(w.Layers[1].Linear.ALog)
	dtb, _ := w.Float32(w.Layers[1].Linear.DtBias)
	for i := range alog {
		a := math.Exp(float64(alog[i]))
		dt := math.Log1p(math.Exp(float64(dtb[i])))
		if a < 0.99 || a > 16.1 || dt < 0.00099 || dt > 0.101 {
			t.Errorf("head %d: A %v dt %v", i, a, dt)
		}
	}
}

package drama3

import (
	"strings"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/demo"
)

func TestCodecWeightNormFold(t *testing.T) {
	ts := checkpoint.NewTensorSet()
	add := func(name string, shape []int, v []float32) {
		if err := ts.Add(checkpoint.Float32Tensor(name, shape, v)); err != nil {
			t.Fatal(err)
		}
	}
	// Row 0: v = (3, 4), ‖v‖ = 5, g = 10 → (6, 8). Row 1: v = (0, −2), g = 0.5 → (0, −0.5).
	add("a.parametrizations.weight.original0", []int{2, 1, 1}, []float32{10, 0.5})
	add("a.parametrizations.weight.original1", []int{2, 2, 1}, []float32{3, 4, 0, -2})
	add("b.weight_g", []int{2, 1, 1}, []float32{10, 0.5})
	add("b.weight_v", []int{2, 2, 1}, []float32{3, 4, 0, -2})
	add("z.weight_g", []int{1, 1, 1}, []float32{1})
	add("z.weight_v", []int{1, 2, 1}, []float32{0, 0})
	l := &codecLoader{ts: ts, used: map[string]bool{}}
	for _, p := range []string{"a", "b"} {
		w := l.weightNormed(p, 2, 2, 1)
		if want := []float32{6, 8, 0, -0.5}; len(w) != 4 || w[0] != want[0] || w[1] != want[1] || w[2] != want[2] || w[3] != want[3] {
			t.Errorf("%s: folded %v, want %v (%v)", p, w, want, l.err)
		}
	}
	if l.weightNormed("z", 1, 2, 1); l.err == nil || !strings.Contains(l.err.Error(), "z.weight_v") {
		t.Errorf("zero direction: error %v", l.err)
	}
}

// The demo codec's state dict gives the geometry of the tiny-w128 fixture
// (shared/oracle/codec/tiny-w128/meta.json): ten codebooks of the real
// sizes, 2048 samples per frame, and a weight for every stage.
func TestReadCodecDemoGeometry(t *testing.T) {
	w, err := ReadCodecBytes(demo.CodecPTH, "demo codec.pth", CodecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g := w.Geometry
	if g.Codebooks() != 10 || g.SemanticCodes != 4096 || g.ResidualCodes != 1024 || g.SamplesPerFrame != 2048 ||
		g.Window != CodecDefaultWindow || g.PostLayers != len(w.Post.Layers) || len(w.Decoder.Blocks) != len(g.DecoderStrides) {
		t.Fatalf("geometry %+v", g)
	}
	if len(w.Residual) != 9 || len(w.Semantic.Codebook) != 4096*g.CodebookDim || len(w.Decoder.Last.W) != w.Decoder.Last.In*w.Decoder.Last.Kernel {
		t.Fatalf("weights: %d residual codebooks, semantic %d values, last conv %d", len(w.Residual), len(w.Semantic.Codebook), len(w.Decoder.Last.W))
	}
	if _, err := ReadCodecBytes(demo.CodecPTH, "demo", CodecOptions{Window: CodecMaxFrames + 1}); err == nil {
		t.Fatal("window past the RoPE table accepted")
	}
}

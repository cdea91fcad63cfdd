package cpu

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/demo"
	"proscenium/engine/drama3"
)

// codecFixture is one golden case of shared/oracle/codec, copied into
// testdata/codec: codes, stage outputs and the geometry in meta.json. The
// tiny-w128 weights are the demo codec (engine/demo/codec.pth).
type codecFixture struct {
	name  string
	codec *Codec
	codes []int32 // frame-major
	nf    int
	zRVQ  []float32
	zPost []float32
	zUp   []float32
	pcm   []float32
	meta  codecMeta

	stagesOnce sync.Once
	stages     *CodecStages // our whole decode, shared by the tests
	stagesErr  error
}

// decoded returns our whole decode of the fixture (computed once).
func (f *codecFixture) decoded(t testing.TB) *CodecStages {
	t.Helper()
	f.stagesOnce.Do(func() { f.stages, f.stagesErr = f.codec.DecodeStages(f.codes) })
	if f.stagesErr != nil {
		t.Fatalf("%s: %v", f.name, f.stagesErr)
	}
	return f.stages
}

type codecMeta struct {
	Frames   int `json:"frames"`
	Samples  int `json:"samples"`
	Geometry struct {
		Latent int `json:"latent"`
		DecDim int `json:"dec_dim"`
		NLayer int `json:"n_layer"`
		Heads  int `json:"heads"`
		Window int `json:"window"`
	} `json:"geometry"`
}

var (
	codecFixturesOnce sync.Once
	codecFixtures     map[string]*codecFixture
	codecFixturesErr  error
)

func loadCodecFixtures(t testing.TB) map[string]*codecFixture {
	t.Helper()
	codecFixturesOnce.Do(func() {
		codecFixtures = map[string]*codecFixture{}
		for _, name := range []string{"tiny-w8", "tiny-w128"} {
			f, err := loadCodecFixture(name)
			if err != nil {
				codecFixturesErr = err
				return
			}
			codecFixtures[name] = f
		}
	})
	if codecFixturesErr != nil {
		t.Fatal(codecFixturesErr)
	}
	return codecFixtures
}

func loadCodecFixture(name string) (*codecFixture, error) {
	dir := filepath.Join("testdata", "codec", name)
	f := &codecFixture{name: name}
	raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &f.meta); err != nil {
		return nil, err
	}
	opt := drama3.CodecOptions{Window: f.meta.Geometry.Window}
	if name == "tiny-w128" {
		f.codec, err = LoadCodecBytes(demo.CodecPTH, "engine/demo/codec.pth", opt)
	} else {
		f.codec, err = LoadCodecFile(filepath.Join(dir, "codec.pth"), opt)
	}
	if err != nil {
		return nil, err
	}
	ct, err := checkpoint.ReadNPYFile(filepath.Join(dir, "codes.npy"))
	if err != nil {
		return nil, err
	}
	f.codes, f.nf, err = CodecCodesFromNPY(ct)
	if err != nil {
		return nil, err
	}
	for _, s := range []struct {
		file string
		dst  *[]float32
	}{{"z_rvq.npy", &f.zRVQ}, {"z_post.npy", &f.zPost}, {"z_up.npy", &f.zUp}, {"pcm.npy", &f.pcm}} {
		tn, err := checkpoint.ReadNPYFile(filepath.Join(dir, s.file))
		if err != nil {
			return nil, err
		}
		if *s.dst, err = tn.Float32s(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// codecErr is the relative error ‖a − b‖/‖b‖ and the largest absolute
// difference relative to max |b|.
func codecErr(a, b []float32) (rel, maxRel float64) {
	var num, den, maxD, maxB float64
	for i := range b {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
		maxD = math.Max(maxD, math.Abs(d))
		maxB = math.Max(maxB, math.Abs(float64(b[i])))
		if math.IsNaN(d) {
			return math.NaN(), math.NaN()
		}
	}
	return math.Sqrt(num / den), maxD / maxB
}

func TestCodecGeometryFromShapes(t *testing.T) {
	for name, f := range loadCodecFixtures(t) {
		g := f.codec.Geometry()
		m := f.meta.Geometry
		if g.Latent != m.Latent || g.DecoderDim != m.DecDim || g.PostLayers != m.NLayer || g.PostHeads != m.Heads || g.Window != m.Window {
			t.Errorf("%s: geometry %+v, meta %+v", name, g, m)
		}
		if g.SamplesPerFrame != 2048 || g.Codebooks() != 10 || g.SemanticCodes != 4096 || g.ResidualCodes != 1024 || g.CodebookDim != 8 {
			t.Errorf("%s: geometry %+v", name, g)
		}
		if f.meta.Samples != f.nf*g.SamplesPerFrame || f.meta.Frames != f.nf {
			t.Errorf("%s: meta frames %d samples %d, codes have %d frames", name, f.meta.Frames, f.meta.Samples, f.nf)
		}
		// Receptive field: layers·(window−1) + 10 (see historyFrames).
		if want := m.NLayer*(m.Window-1) + 10; g.HistoryFrames != want {
			t.Errorf("%s: HistoryFrames %d, want %d", name, g.HistoryFrames, want)
		}
	}
}

func TestCodecGoldens(t *testing.T) {
	for name, f := range loadCodecFixtures(t) {
		st := f.decoded(t)
		for _, s := range []struct {
			stage     string
			got, want []float32
		}{{"z_rvq", st.ZRVQ, f.zRVQ}, {"z_post", st.ZPost, f.zPost}, {"z_up", st.ZUp, f.zUp}, {"pcm", st.PCM, f.pcm}} {
			if len(s.got) != len(s.want) {
				t.Errorf("%s %s: %d values, golden has %d", name, s.stage, len(s.got), len(s.want))
				continue
			}
			rel, maxRel := codecErr(s.got, s.want)
			t.Logf("%s %s: relative error %.3g, max |Δ|/max|ref| %.3g", name, s.stage, rel, maxRel)
			if !(rel <= 1e-5) || !(maxRel <= 1e-5) {
				t.Errorf("%s %s: relative error %.3g (max %.3g), want ≤ 1e-5", name, s.stage, rel, maxRel)
			}
		}
	}
}

// TestCodecWindowMatters decodes tiny-w8 with the default 128-frame window
// instead of its 8: the post-module output must then miss the golden, so the
// golden does exercise the window mask.
func TestCodecWindowMatters(t *testing.T) {
	f := loadCodecFixtures(t)["tiny-w8"]
	wide, err := LoadCodecFile(filepath.Join("testdata", "codec", "tiny-w8", "codec.pth"), drama3.CodecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if wide.Geometry().Window != drama3.CodecDefaultWindow {
		t.Fatalf("window %d", wide.Geometry().Window)
	}
	st, err := wide.DecodeStages(f.codes[:20*10])
	if err != nil {
		t.Fatal(err)
	}
	// Frames < 8 see no difference; later frames attend beyond the window.
	lat := f.codec.Geometry().Latent
	var early, late []float32
	var earlyRef, lateRef []float32
	for c := 0; c < lat; c++ {
		early = append(early, st.ZPost[c*20:c*20+8]...)
		late = append(late, st.ZPost[c*20+8:c*20+20]...)
		earlyRef = append(earlyRef, f.zPost[c*f.nf:c*f.nf+8]...)
		lateRef = append(lateRef, f.zPost[c*f.nf+8:c*f.nf+20]...)
	}
	if rel, _ := codecErr(early, earlyRef); !(rel < 1e-5) {
		t.Errorf("frames 0..7 with a wider window: relative error %g, want the golden", rel)
	}
	if rel, _ := codecErr(late, lateRef); !(rel > 1e-3) {
		t.Errorf("frames 8..19 with a 128-frame window match the 8-frame golden (relative error %g)", rel)
	}
}

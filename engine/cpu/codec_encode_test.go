package cpu

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// loadCodecEncodeFixture reads the enc/ golden of a codec case and its
// encoder.
func loadCodecEncodeFixture(t testing.TB, name string) (*CodecEncoder, *CodecEncodeGolden) {
	t.Helper()
	g, err := ReadCodecEncodeGolden(filepath.Join("testdata", "codec", name))
	if err != nil {
		t.Fatal(err)
	}
	return NewCodecEncoder(g.Weights), g
}

// TestCodecEncodeGoldens checks the encoder against the reference's
// DAC.encode: z_enc and z_pre within 1e-4 relative, codes equal in at least
// 95 % of frames and every other frame a near-tie of the reference.
func TestCodecEncodeGoldens(t *testing.T) {
	for _, name := range []string{"tiny-w8", "tiny-w128"} {
		enc, fx := loadCodecEncodeFixture(t, name)
		got, err := enc.Encode(fx.Audio)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Frames != fx.Frames {
			t.Fatalf("%s: %d frames, want %d", name, got.Frames, fx.Frames)
		}
		for _, s := range []struct {
			name      string
			got, want []float32
		}{{"z_enc", got.ZEnc, fx.ZEnc}, {"z_pre", got.ZPre, fx.ZPre}} {
			if len(s.got) != len(s.want) {
				t.Fatalf("%s %s: %d values, want %d", name, s.name, len(s.got), len(s.want))
			}
			rel, maxRel := codecErr(s.got, s.want)
			t.Logf("%s %s: relative error %.2e (max %.2e)", name, s.name, rel, maxRel)
			if !(rel < 1e-4) {
				t.Errorf("%s %s: relative error %g", name, s.name, rel)
			}
		}
		nb := enc.Geometry().Codebooks
		same, err := CodecCodesMatch(got.Codes, fx.Codes, fx.Margins, nb, 1e-4)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s: codes equal in %d of %d frames", name, same, fx.Frames)
		if same*100 < 95*fx.Frames {
			t.Errorf("%s: codes equal in %d of %d frames, want at least 95 %%", name, same, fx.Frames)
		}
		for i, m := range got.Margins {
			if want := fx.Margins[i]; got.Codes[i] == fx.Codes[i] && math.Abs(float64(m-want)) > 1e-4 {
				t.Errorf("%s: margin %d is %g, the reference's %g", name, i, m, want)
				break
			}
		}
	}
}

// TestCodecEncodeGeometry: the geometry comes from the shapes.
func TestCodecEncodeGeometry(t *testing.T) {
	enc, _ := loadCodecEncodeFixture(t, "tiny-w128")
	g := enc.Geometry()
	if g.EncoderDim != 8 || g.Latent != 128 || g.SamplesPerFrame != 2048 || g.Codebooks != 10 || g.PreLayers != 2 ||
		len(g.EncoderStrides) != 4 || g.EncoderStrides[3] != 8 || g.EncoderLayers[3] != 1 || g.EncoderLayers[0] != 0 {
		t.Errorf("geometry %+v", g)
	}
}

// TestCodecEncodeRefuses: bad audio and codecs without an encoder are
// errors that name the problem.
func TestCodecEncodeRefuses(t *testing.T) {
	enc, _ := loadCodecEncodeFixture(t, "tiny-w8")
	for _, tc := range []struct {
		audio []float32
		want  string
	}{
		{nil, "no audio"},
		{[]float32{0, float32(math.NaN())}, "sample 1 is not finite"},
		{[]float32{float32(math.Inf(1))}, "sample 0 is not finite"},
	} {
		if _, err := enc.Encode(tc.audio); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Encode(%v): %v, want %q", tc.audio, err, tc.want)
		}
	}
	// A short input is padded to one frame.
	res, err := enc.Encode(make([]float32, 10))
	if err != nil || res.Frames != 1 || len(res.Codes) != 10 {
		t.Errorf("10 samples: %v frames, %v", res, err)
	}
	ts, err := checkpoint.ReadTorchFile(filepath.Join("testdata", "codec", "tiny-w8", "codec.pth"))
	if err != nil {
		t.Fatal(err)
	}
	dec := checkpoint.NewTensorSet()
	for _, n := range ts.Names() {
		if !strings.HasPrefix(n, "encoder.") {
			if err := dec.Add(ts.Get(n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := LoadCodecEncoder(dec, drama3.CodecOptions{}); err == nil || !strings.Contains(err.Error(), "no encoder") {
		t.Errorf("decoder-only codec: %v", err)
	}
}

package cpu

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/demo"
	"proscenium/engine/drama3"
)

// codecEncodeFixture is the enc/ golden of a codec case: the reference's
// DAC.encode of a synthetic voiced signal.
type codecEncodeFixture struct {
	audio, zEnc, zPre []float32
	codes             []int32 // frame-major
	margins           []float32
	frames            int
}

func loadCodecEncodeFixture(t testing.TB, name string) (*CodecEncoder, *codecEncodeFixture) {
	t.Helper()
	dir := filepath.Join("testdata", "codec", name)
	var meta codecMeta
	raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	var ts *checkpoint.TensorSet
	if name == "tiny-w128" {
		ts, err = checkpoint.ReadTorch(strings.NewReader(string(demo.CodecPTH)), int64(len(demo.CodecPTH)), "engine/demo/codec.pth")
	} else {
		ts, err = checkpoint.ReadTorchFile(filepath.Join(dir, "codec.pth"))
	}
	if err != nil {
		t.Fatal(err)
	}
	enc, err := LoadCodecEncoder(ts, drama3.CodecOptions{Window: meta.Geometry.Window})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	fx := &codecEncodeFixture{}
	read := func(file string) *checkpoint.Tensor {
		tn, err := checkpoint.ReadNPYFile(filepath.Join(dir, "enc", file))
		if err != nil {
			t.Fatal(err)
		}
		return tn
	}
	for _, s := range []struct {
		file string
		dst  *[]float32
	}{{"audio.npy", &fx.audio}, {"z_enc.npy", &fx.zEnc}, {"z_pre.npy", &fx.zPre}} {
		if *s.dst, err = read(s.file).Float32s(); err != nil {
			t.Fatal(err)
		}
	}
	if fx.codes, fx.frames, err = CodecCodesFromNPY(read("codes.npy")); err != nil {
		t.Fatal(err)
	}
	m, err := read("margins.npy").Float32s()
	if err != nil {
		t.Fatal(err)
	}
	nb := len(fx.codes) / fx.frames
	fx.margins = make([]float32, len(m))
	for i := 0; i < nb; i++ { // [codebooks][T] → frame-major
		for f := 0; f < fx.frames; f++ {
			fx.margins[f*nb+i] = m[i*fx.frames+f]
		}
	}
	return enc, fx
}

// TestCodecEncodeGoldens checks the encoder against the reference's
// DAC.encode: z_enc and z_pre within 1e-4 relative, codes equal in at least
// 95 % of frames and every other frame a near-tie of the reference.
func TestCodecEncodeGoldens(t *testing.T) {
	for _, name := range []string{"tiny-w8", "tiny-w128"} {
		enc, fx := loadCodecEncodeFixture(t, name)
		got, err := enc.Encode(fx.audio)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got.Frames != fx.frames {
			t.Fatalf("%s: %d frames, want %d", name, got.Frames, fx.frames)
		}
		for _, s := range []struct {
			name      string
			got, want []float32
		}{{"z_enc", got.ZEnc, fx.zEnc}, {"z_pre", got.ZPre, fx.zPre}} {
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
		same, err := CodecCodesMatch(got.Codes, fx.codes, fx.margins, nb, 1e-4)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s: codes equal in %d of %d frames", name, same, fx.frames)
		if same*100 < 95*fx.frames {
			t.Errorf("%s: codes equal in %d of %d frames, want at least 95 %%", name, same, fx.frames)
		}
		for i, m := range got.Margins {
			if want := fx.margins[i]; got.Codes[i] == fx.codes[i] && math.Abs(float64(m-want)) > 1e-4 {
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

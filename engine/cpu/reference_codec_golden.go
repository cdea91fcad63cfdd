package cpu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"proscenium/engine/checkpoint"
	"proscenium/engine/demo"
	"proscenium/engine/drama3"
)

// CodecEncodeGolden is a codec case's enc/ golden (engine/cpu/testdata/codec/
// NAME, copied from ../shared/oracle/codec: the public reference's
// DAC.encode of a synthetic voiced signal), as every encoder's test reads
// it.
type CodecEncodeGolden struct {
	Weights           *drama3.CodecEncoderWeights // the case's codec (codec.pth, or the demo codec)
	Audio, ZEnc, ZPre []float32
	Codes             []int32   // frame-major
	Margins           []float32 // frame-major: each pick's best minus second-best similarity
	Frames            int
}

// ReadCodecEncodeGolden reads the case in dir: meta.json (the attention
// window), codec.pth (absent: the demo codec) and enc/{audio, z_enc, z_pre,
// codes, margins}.npy.
func ReadCodecEncodeGolden(dir string) (*CodecEncodeGolden, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, err
	}
	var meta struct {
		Geometry struct {
			Window int `json:"window"`
		} `json:"geometry"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var ts *checkpoint.TensorSet
	if _, err := os.Stat(drama3.CodecPath(dir)); err == nil {
		ts, err = checkpoint.ReadTorchFile(drama3.CodecPath(dir))
		if err != nil {
			return nil, err
		}
	} else if ts, err = checkpoint.ReadTorch(bytes.NewReader(demo.CodecPTH), int64(len(demo.CodecPTH)), "the embedded demo codec"); err != nil {
		return nil, err
	}
	g := &CodecEncodeGolden{}
	if g.Weights, err = drama3.ReadCodecEncoder(ts, drama3.CodecOptions{Window: meta.Geometry.Window}); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	read := func(file string) (*checkpoint.Tensor, error) {
		return checkpoint.ReadNPYFile(filepath.Join(dir, "enc", file))
	}
	for _, s := range []struct {
		file string
		dst  *[]float32
	}{{"audio.npy", &g.Audio}, {"z_enc.npy", &g.ZEnc}, {"z_pre.npy", &g.ZPre}} {
		tn, err := read(s.file)
		if err != nil {
			return nil, err
		}
		if *s.dst, err = tn.Float32s(); err != nil {
			return nil, err
		}
	}
	tn, err := read("codes.npy")
	if err != nil {
		return nil, err
	}
	if g.Codes, g.Frames, err = CodecCodesFromNPY(tn); err != nil {
		return nil, err
	}
	if tn, err = read("margins.npy"); err != nil {
		return nil, err
	}
	m, err := tn.Float32s()
	if err != nil {
		return nil, err
	}
	if g.Frames == 0 || len(m) != len(g.Codes) {
		return nil, fmt.Errorf("%s: %d margins for %d codes of %d frames", dir, len(m), len(g.Codes), g.Frames)
	}
	nb := len(g.Codes) / g.Frames
	g.Margins = make([]float32, len(m))
	for i := 0; i < nb; i++ { // [codebooks][T] → frame-major
		for f := 0; f < g.Frames; f++ {
			g.Margins[f*nb+i] = m[i*g.Frames+f]
		}
	}
	return g, nil
}

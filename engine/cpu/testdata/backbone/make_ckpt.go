//go:build ignore

// make_ckpt writes the two small checkpoints the backbone goldens are made
// from (testdata/backbone/ckpt/{like,odd}): the real Drama 3 layout
// (config.json + model.safetensors, BF16 dense weights, block-FP8 per-expert
// routed experts with float32 weight_scale_inv, the tower and codebook
// tensors the weight map expects), random weights, a small vocabulary and
// small audio codebooks so the files stay small.
//
//	go run ./engine/cpu/testdata/backbone/make_ckpt.go
//
// The text geometries are drama3.TinyConfig (head_dim 256, partial rotary
// 0.25, like the real model) and drama3.TinyOddConfig (odd sizes).
package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

func main() {
	for name, cfg := range map[string]*drama3.Config{"like": drama3.TinyConfig(), "odd": drama3.TinyOddConfig()} {
		cfg.Text.VocabSize = 300
		cfg.Audio.CodebookSize = 16
		cfg.Audio.SemanticCodebookSize = 32
		cfg.Audio.IntermediateSize = 32
		if err := write(filepath.Join("engine", "cpu", "testdata", "backbone", "ckpt", name), cfg, uint64(len(name))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func write(dir string, cfg *drama3.Config, seed uint64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := drama3.MarshalConfig(cfg)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), js, 0o644); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(seed, 2026))
	prefix := map[string]string{"backbone": "model.language_model.", "audio": "", "root": ""}
	var out []*checkpoint.Tensor
	for _, e := range drama3.ExpectedTensors(cfg, false) {
		if e.Optional {
			continue
		}
		name := prefix[e.Group] + e.Name
		vals := values(r, e.Name, e.Shape)
		if e.Expert && cfg.Quant.FP8() {
			w, s := fp8Blocks(vals, e.Shape[0], e.Shape[1], cfg.Quant.BlockRows)
			out = append(out, &checkpoint.Tensor{Name: name, DType: checkpoint.F8E4M3, Shape: e.Shape, Data: w},
				checkpoint.Float32Tensor(prefix[e.Group]+e.Scale, []int{ceil(e.Shape[0], cfg.Quant.BlockRows), ceil(e.Shape[1], cfg.Quant.BlockCols)}, s))
			continue
		}
		data := make([]byte, 2*len(vals))
		for i, v := range vals {
			h := checkpoint.F32ToBF16(v)
			data[2*i], data[2*i+1] = byte(h), byte(h>>8)
		}
		out = append(out, &checkpoint.Tensor{Name: name, DType: checkpoint.BF16, Shape: e.Shape, Data: data})
	}
	return checkpoint.WriteSafetensors(filepath.Join(dir, "model.safetensors"), out, map[string]string{"format": "pt"})
}

// values draws one tensor: matrices N(0, 1/in); zero-centred norm gains
// N(0, 0.1²); plain gains 1 + N(0, 0.1²); DeltaNet A_log = log U(0.5, 8),
// dt_bias N(0, 0.5²); embeddings N(0, 1).
func values(r *rand.Rand, name string, shape []int) []float32 {
	n := 1
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	in := shape[len(shape)-1]
	for i := range v {
		x := r.NormFloat64()
		switch {
		case strings.HasSuffix(name, "A_log"):
			x = math.Log(0.5 + 7.5*r.Float64())
		case strings.HasSuffix(name, "dt_bias"):
			x *= 0.5
		case strings.HasSuffix(name, "linear_attn.norm.weight"), strings.Contains(name, "audio_decoder"):
			if len(shape) == 1 {
				x = 1 + 0.1*x
			} else {
				x /= math.Sqrt(float64(in))
			}
		case len(shape) == 1:
			x *= 0.1
		case strings.Contains(name, "embed"):
		default:
			x /= math.Sqrt(float64(in))
		}
		v[i] = float32(x)
	}
	return v
}

// fp8Blocks quantises a [rows, cols] matrix to F8_E4M3 with one float32
// scale per block×block tile (scale = max|w|/448 of the tile).
func fp8Blocks(w []float32, rows, cols, block int) ([]byte, []float32) {
	sc := ceil(cols, block)
	scales := make([]float32, ceil(rows, block)*sc)
	for i := range scales {
		br, bc := i/sc, i%sc
		var m float32
		for r := br * block; r < min(rows, (br+1)*block); r++ {
			for c := bc * block; c < min(cols, (bc+1)*block); c++ {
				m = max(m, float32(math.Abs(float64(w[r*cols+c]))))
			}
		}
		scales[i] = m / 448
		if m == 0 {
			scales[i] = 1
		}
	}
	q := make([]byte, rows*cols)
	for r := 0; r < rows; r++ {
		for c := 0; c < cols; c++ {
			q[r*cols+c] = checkpoint.F32ToF8E4M3(w[r*cols+c] / scales[(r/block)*sc+c/block])
		}
	}
	return q, scales
}

func ceil(a, b int) int { return (a + b - 1) / b }

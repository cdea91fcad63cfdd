package drama3

import (
	_ "embed"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"

	"proscenium/engine/checkpoint"
)

// This file writes the full-size synthetic checkpoint for speed work
// (`proscenium make-tiny --geometry full`): random weights at the full
// geometry in the real layout (block-FP8 experts in the fused form), ≈ 36
// GB, streamed shard by shard in parallel so nothing of that size is held
// in memory. Values follow make-tiny's initialisation for BF16 tensors;
// FP8 expert codes are random bytes (never NaN) with scales that give them
// a variance of 1/cols, as the device's synthetic weights are.

// fullShapedJSON is the Qwen3.5-35B-A3B-shaped config.json of the real
// model (docs/MODEL.md).
//
//go:embed testdata/drama3_full_shaped.json
var fullShapedJSON []byte

// FullConfig is the full geometry (testdata/drama3_full_shaped.json).
func FullConfig() (*Config, error) { return ParseConfig(fullShapedJSON) }

// FullOptions configures WriteFull.
type FullOptions struct {
	Seed          uint64
	BaseTokenizer []byte // the Qwen tokenizer.json (required)
	Config        *Config
	ShardBytes    int64 // data per shard (0: 4 GiB)
	Workers       int   // shards written at once (0: the CPUs, at most 8)
}

// WriteFull writes a random-weights checkpoint at opts.Config's geometry
// (nil: FullConfig) into dir: config.json, the sharded safetensors with
// their index, tokenizer.json and the demo codec.pth (the codec is not what
// this checkpoint measures).
func WriteFull(dir string, opts FullOptions) error {
	cfg := opts.Config
	if cfg == nil {
		var err error
		if cfg, err = FullConfig(); err != nil {
			return err
		}
	}
	if len(opts.BaseTokenizer) == 0 {
		return fmt.Errorf("make-tiny needs the base Qwen tokenizer.json")
	}
	tokJSON, need, err := drama3Tokenizer(opts.BaseTokenizer, cfg.Audio.SemanticCodebookSize)
	if err != nil {
		return err
	}
	if cfg.Text.VocabSize < need {
		return fmt.Errorf("text_config.vocab_size %d is smaller than the tokenizer's %d tokens", cfg.Text.VocabSize, need)
	}
	cfgJSON, err := MarshalConfig(cfg)
	if err != nil {
		return err
	}
	fp8 := cfg.Quant.FP8()
	prefix := map[string]string{"backbone": tinyBackbonePrefix, "audio": tinyAudioPrefix, "root": ""}
	var tensors []*checkpoint.Tensor
	fills := map[string]func(*tinyRand, io.Writer, int64) error{}
	for _, e := range ExpectedTensors(cfg, true) {
		if e.Optional {
			continue // the semantic logits come from the LM head rows
		}
		name := prefix[e.Group] + e.Name
		cols := e.Shape[len(e.Shape)-1]
		if e.Expert && fp8 {
			tensors = append(tensors, &checkpoint.Tensor{Name: name, DType: checkpoint.F8E4M3, Shape: e.Shape})
			fills[name] = fillFP8
			n := len(e.Shape)
			shape := append(append([]int(nil), e.Shape[:n-2]...),
				(e.Shape[n-2]+cfg.Quant.BlockRows-1)/cfg.Quant.BlockRows, (e.Shape[n-1]+cfg.Quant.BlockCols-1)/cfg.Quant.BlockCols)
			sname := prefix[e.Group] + e.Scale
			tensors = append(tensors, &checkpoint.Tensor{Name: sname, DType: checkpoint.F32, Shape: shape})
			// Random E4M3 codes have a mean square of about 2.3 (the device's
			// synthetic weights use the same figure).
			s := 1 / math.Sqrt(2.3*float64(cols))
			fills[sname] = fillF32(func(r *tinyRand) float32 { return float32(s * (0.75 + 0.5*r.float())) })
			continue
		}
		tensors = append(tensors, &checkpoint.Tensor{Name: name, DType: checkpoint.BF16, Shape: e.Shape})
		fills[name] = fillBF16(initFor(cfg, e))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	shard := opts.ShardBytes
	if shard <= 0 {
		shard = 4 << 30
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = min(runtime.NumCPU(), 8)
	}
	fill := func(t *checkpoint.Tensor, w io.Writer) error {
		return fills[t.Name](newTinyRand(opts.Seed, t.Name), w, int64(t.NumElements()))
	}
	if _, err := checkpoint.WriteSafetensorsStreamed(dir, tensors, fill, map[string]string{"format": "pt"}, shard, workers); err != nil {
		return err
	}
	return writeTinyFiles(dir, tokJSON, cfgJSON)
}

// fillBlock is the buffer a fill writes at a time.
const fillBlock = 1 << 20

// fillFP8 writes n random E4M3 codes, none of them NaN (S.1111.111).
func fillFP8(r *tinyRand, w io.Writer, n int64) error {
	buf := make([]byte, fillBlock)
	for n > 0 {
		b := buf[:min(int64(len(buf)), n)]
		for i := 0; i < len(b); i += 8 {
			v := r.next()
			for k := 0; k < 8 && i+k < len(b); k++ {
				c := byte(v >> (8 * k))
				if c&0x7f == 0x7f {
					c ^= 1
				}
				b[i+k] = c
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		n -= int64(len(b))
	}
	return nil
}

// fillBF16 writes n BF16 values drawn by init.
func fillBF16(init func(*tinyRand) float32) func(*tinyRand, io.Writer, int64) error {
	return func(r *tinyRand, w io.Writer, n int64) error {
		buf := make([]byte, fillBlock)
		for n > 0 {
			b := buf[:min(int64(len(buf)/2), n)*2]
			for i := 0; i < len(b); i += 2 {
				binary.LittleEndian.PutUint16(b[i:], checkpoint.F32ToBF16(init(r)))
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
			n -= int64(len(b) / 2)
		}
		return nil
	}
}

// fillF32 writes n float32 values drawn by init.
func fillF32(init func(*tinyRand) float32) func(*tinyRand, io.Writer, int64) error {
	return func(r *tinyRand, w io.Writer, n int64) error {
		buf := make([]byte, fillBlock)
		for n > 0 {
			b := buf[:min(int64(len(buf)/4), n)*4]
			for i := 0; i < len(b); i += 4 {
				binary.LittleEndian.PutUint32(b[i:], math.Float32bits(init(r)))
			}
			if _, err := w.Write(b); err != nil {
				return err
			}
			n -= int64(len(b) / 4)
		}
		return nil
	}
}

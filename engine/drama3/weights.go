package drama3

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"proscenium/engine/checkpoint"
)

// This file is the weight map: the one table that says which checkpoint
// tensor is which model weight (table), the Model tree generic over the
// tensor handle, binding it from the stored tensors (Bind), and mapping it to
// a backend's handles (Map). Bound fields are handles (Param) on the stored
// tensors, not their data: the loaders stream the bytes later through
// Weights.Read.

// Param is a handle on one stored tensor: what and where it is.
type Param struct {
	Name   string // full name in the checkpoint
	DType  checkpoint.DType
	Shape  []int
	File   string // the file holding it (a shard path)
	Offset int64  // absolute byte offset of its data in File
	Size   int64  // bytes of data
	Scale  *Param // F8_E4M3 weights: the float32 weight_scale_inv block table; nil otherwise
}

// NumElements is the product of the shape.
func (p *Param) NumElements() int64 {
	n := int64(1)
	for _, d := range p.Shape {
		n *= int64(d)
	}
	return n
}

// TensorReader reads one stored tensor's bytes (the checkpoint reader).
type TensorReader interface {
	ReadTensor(name string) (*checkpoint.Tensor, error)
}

// Weights is a Drama 3 checkpoint's weight map bound over its stored
// tensors: the Model tree with a handle on each tensor, and the reader that
// streams their bytes.
type Weights struct {
	Config         *Config
	BackbonePrefix string // e.g. "model.language_model."
	AudioPrefix    string // prefix of audio_decoder_mtp*, codebook_embeddings, semantic_head
	Model[*Param]

	reader TensorReader
}

// Model is every weight of the model, one T per tensor: *Param handles as
// bound from the checkpoint (Weights), float32 slices on the CPU, device
// pointers on a GPU. Map turns one into another; the table below fixes each
// tensor's name, shape and the config keys that give it.
type Model[T any] struct {
	Backbone[T]
	// SemanticHead [semantic entries + 1, hidden]: logits of codes 0..4095
	// then end of speech. Zero (nil handle): the LM head rows of
	// <|semantic:N|> and <|im_end|> serve (heads.go).
	SemanticHead T
	Tower        Tower[T]
}

// Backbone is the Qwen3.5-MoE hybrid's weights.
type Backbone[T any] struct {
	Embed     T // embed_tokens [vocab, hidden]
	LMHead    T // lm_head [vocab, hidden]; Embed's value when tie_word_embeddings
	FinalNorm T // norm [hidden], zero-centred
	Layers    []Layer[T]
}

// Tower is the codebook tower and the codebook embeddings it and the
// feedback row read.
type Tower[T any] struct {
	// Embeddings: one table per codebook, [entries_i, hidden].
	Embeddings []T
	Shared     []TowerLayer[T] // 4: embed codebook 0
	Residual   []TowerLayer[T] // 9: layer j-1 embeds codebook j-1, its Head gives codebook j
}

// Layer is one backbone layer: a mixer (Linear or Full is set, as Kind says)
// and its MoE.
type Layer[T any] struct {
	Kind              LayerType
	InputNorm         T // input_layernorm [hidden], zero-centred
	PostAttentionNorm T // post_attention_layernorm [hidden], zero-centred
	Linear            *DeltaNet[T]
	Full              *Attention[T]
	MoE               MoE[T]
}

// DeltaNet is the gated DeltaNet (linear attention) mixer (linear_attn.*).
type DeltaNet[T any] struct {
	InProjQKV T // [2·Hk·dk + Hv·dv, hidden]
	InProjZ   T // [Hv·dv, hidden]
	InProjB   T // [Hv, hidden]
	InProjA   T // [Hv, hidden]
	Conv1D    T // [2·Hk·dk + Hv·dv, 1, K]
	DtBias    T // [Hv]
	ALog      T // [Hv]
	Norm      T // [dv], plain gain
	OutProj   T // [hidden, Hv·dv]
}

// Attention is the gated softmax attention mixer (self_attn.*).
type Attention[T any] struct {
	QProj T // [heads·2·head_dim, hidden]: per head query then gate
	KProj T // [kv_heads·head_dim, hidden]
	VProj T // [kv_heads·head_dim, hidden]
	OProj T // [hidden, heads·head_dim]
	QNorm T // [head_dim], zero-centred
	KNorm T // [head_dim], zero-centred
}

// MoE is the routed experts and the gated shared expert (mlp.*). The expert
// layout is the checkpoint's: per-expert 2-D tensors (Experts) or, when
// Fused, 3-D tensors (GateUp, Down).
type MoE[T any] struct {
	Router  T // gate [experts, hidden]
	Fused   bool
	Experts []Expert[T] // per-expert layout; nil when Fused
	GateUp  T           // fused [experts, 2·I, hidden]: gate rows then up rows
	Down    T           // fused [experts, hidden, I]

	SharedGate       T // shared_expert.gate_proj [Is, hidden]
	SharedUp         T // shared_expert.up_proj [Is, hidden]
	SharedDown       T // shared_expert.down_proj [hidden, Is]
	SharedExpertGate T // shared_expert_gate [1, hidden]
}

// Expert is one SwiGLU feed-forward: a routed expert of the per-expert
// layout (or, for backends, the shared expert or a slice of a fused one).
type Expert[T any] struct {
	Gate T // [I, hidden]
	Up   T // [I, hidden]
	Down T // [hidden, I]
}

// TowerLayer is one codebook-tower layer:
// h_out = OutNorm(Block(EHProj([ENorm(e); HNorm(h_in)]))), Block a pre-norm
// attention + SwiGLU block. Norms are plain-gain RMSNorms.
type TowerLayer[T any] struct {
	ENorm         T // [dim]
	HNorm         T // [dim]
	EHProj        T // [dim, 2·dim]: input columns are [enorm(e); hnorm(h)]
	AttentionNorm T // [dim]
	WQKV          T // [(n_head + 2·n_local_heads)·head_dim, dim]: q rows, k rows, v rows
	WO            T // [dim, n_head·head_dim]
	FFNNorm       T // [dim]
	W1            T // feed_forward.w1 (gate) [intermediate, dim]
	W3            T // feed_forward.w3 (up) [intermediate, dim]
	W2            T // feed_forward.w2 (down) [dim, intermediate]
	OutNorm       T // [dim]
	Head          T // residual layers only: [codebook size, dim]
}

// dtype classes a slot accepts.
type dtypeClass int

const (
	dense  dtypeClass = iota // BF16, F16 or F32
	expert                   // F8_E4M3 with a block scale when the config says fp8, else dense
)

// slot is one row of the weight map: a tensor name relative to a prefix, the
// field it fills and the shape the geometry demands.
type slot[T any] struct {
	group    string // "backbone", "audio" or "root": which discovered prefix applies
	name     string // relative name
	dst      *T
	shape    []int
	keys     string // the config keys that set the shape, for messages
	class    dtypeClass
	optional bool
	scale    string // expert slots: relative name of the block scale tensor
}

// The anchors that locate each group's prefix at load [assumption for the
// audio names, docs/MODEL.md "Checkpoint layout"].
const (
	backboneAnchor = "embed_tokens.weight"
	audioAnchor    = "audio_decoder_mtp_shared.layers.0.enorm.weight"
	lmHeadName     = "lm_head.weight"
)

// table is THE weight map: every tensor of the model, its name, field of m,
// shape and dtype class, in a fixed order. m must have the layout of c
// (newModel): the mixer of each layer and its expert layout. Tower, codebook
// and semantic-head spellings are our assumptions (docs/MODEL.md "Checkpoint
// layout"); backbone spellings are Qwen3.5-MoE's. A tied LM head has no row:
// it is the embedding's value.
func table[T any](c *Config, w *Model[T]) []slot[T] {
	s := backboneTable(&c.Text, &w.Backbone)
	H := c.Text.HiddenSize
	s = append(s, slot[T]{group: "audio", name: "semantic_head.weight", dst: &w.SemanticHead,
		shape: []int{c.Audio.SemanticCodebookSize + 1, H}, keys: "audio_decoder_config.semantic_vocab_size (+1 end), text_config.hidden_size", optional: true})
	return append(s, towerTable(&c.Audio, H, &w.Tower)...)
}

// backboneTable is the backbone's part of the table.
func backboneTable[T any](t *TextConfig, w *Backbone[T]) []slot[T] {
	H, V := t.HiddenSize, t.VocabSize
	var s []slot[T]
	add := func(group, name string, dst *T, keys string, shape ...int) {
		s = append(s, slot[T]{group: group, name: name, dst: dst, shape: shape, keys: keys})
	}
	addExpert := func(name, scale string, dst *T, keys string, shape ...int) {
		s = append(s, slot[T]{group: "backbone", name: name, dst: dst, shape: shape, keys: keys, class: expert, scale: scale})
	}

	add("backbone", "embed_tokens.weight", &w.Embed, "text_config.vocab_size, hidden_size", V, H)
	add("backbone", "norm.weight", &w.FinalNorm, "text_config.hidden_size", H)
	if !t.TieWordEmbeddings {
		add("root", lmHeadName, &w.LMHead, "text_config.vocab_size, hidden_size", V, H)
	}
	for i := range w.Layers {
		L := &w.Layers[i]
		p := fmt.Sprintf("layers.%d.", i)
		add("backbone", p+"input_layernorm.weight", &L.InputNorm, "text_config.hidden_size", H)
		add("backbone", p+"post_attention_layernorm.weight", &L.PostAttentionNorm, "text_config.hidden_size", H)
		if L.Linear != nil {
			m, q := L.Linear, p+"linear_attn."
			k, v, hv := t.LinearKeyDim(), t.LinearValueDim(), t.LinearNumValueHeads
			add("backbone", q+"in_proj_qkv.weight", &m.InProjQKV, "text_config.linear_num_key_heads, linear_key_head_dim, linear_num_value_heads, linear_value_head_dim, hidden_size", 2*k+v, H)
			add("backbone", q+"in_proj_z.weight", &m.InProjZ, "text_config.linear_num_value_heads, linear_value_head_dim, hidden_size", v, H)
			add("backbone", q+"in_proj_b.weight", &m.InProjB, "text_config.linear_num_value_heads, hidden_size", hv, H)
			add("backbone", q+"in_proj_a.weight", &m.InProjA, "text_config.linear_num_value_heads, hidden_size", hv, H)
			add("backbone", q+"conv1d.weight", &m.Conv1D, "text_config.linear_* head sizes, linear_conv_kernel_dim", 2*k+v, 1, t.ConvKernel)
			add("backbone", q+"dt_bias", &m.DtBias, "text_config.linear_num_value_heads", hv)
			add("backbone", q+"A_log", &m.ALog, "text_config.linear_num_value_heads", hv)
			add("backbone", q+"norm.weight", &m.Norm, "text_config.linear_value_head_dim", t.LinearValueHeadDim)
			add("backbone", q+"out_proj.weight", &m.OutProj, "text_config.hidden_size, linear_num_value_heads, linear_value_head_dim", H, v)
		} else {
			m, q := L.Full, p+"self_attn."
			hd := t.HeadDim
			add("backbone", q+"q_proj.weight", &m.QProj, "text_config.num_attention_heads, head_dim (×2: query and gate), hidden_size", 2*t.NumHeads*hd, H)
			add("backbone", q+"k_proj.weight", &m.KProj, "text_config.num_key_value_heads, head_dim, hidden_size", t.NumKVHeads*hd, H)
			add("backbone", q+"v_proj.weight", &m.VProj, "text_config.num_key_value_heads, head_dim, hidden_size", t.NumKVHeads*hd, H)
			add("backbone", q+"o_proj.weight", &m.OProj, "text_config.hidden_size, num_attention_heads, head_dim", H, t.NumHeads*hd)
			add("backbone", q+"q_norm.weight", &m.QNorm, "text_config.head_dim", hd)
			add("backbone", q+"k_norm.weight", &m.KNorm, "text_config.head_dim", hd)
		}
		m, q := &L.MoE, p+"mlp."
		E, I, Is := t.NumExperts, t.MoEIntermediate, t.SharedIntermediate
		add("backbone", q+"gate.weight", &m.Router, "text_config.num_experts, hidden_size", E, H)
		if m.Fused {
			addExpert(q+"experts.gate_up_proj", q+"experts.gate_up_proj_scale_inv", &m.GateUp, "text_config.num_experts, moe_intermediate_size (×2), hidden_size", E, 2*I, H)
			addExpert(q+"experts.down_proj", q+"experts.down_proj_scale_inv", &m.Down, "text_config.num_experts, hidden_size, moe_intermediate_size", E, H, I)
		} else {
			for e := range m.Experts {
				x, ep := &m.Experts[e], fmt.Sprintf("%sexperts.%d.", q, e)
				addExpert(ep+"gate_proj.weight", ep+"gate_proj.weight_scale_inv", &x.Gate, "text_config.moe_intermediate_size, hidden_size", I, H)
				addExpert(ep+"up_proj.weight", ep+"up_proj.weight_scale_inv", &x.Up, "text_config.moe_intermediate_size, hidden_size", I, H)
				addExpert(ep+"down_proj.weight", ep+"down_proj.weight_scale_inv", &x.Down, "text_config.hidden_size, moe_intermediate_size", H, I)
			}
		}
		add("backbone", q+"shared_expert.gate_proj.weight", &m.SharedGate, "text_config.shared_expert_intermediate_size, hidden_size", Is, H)
		add("backbone", q+"shared_expert.up_proj.weight", &m.SharedUp, "text_config.shared_expert_intermediate_size, hidden_size", Is, H)
		add("backbone", q+"shared_expert.down_proj.weight", &m.SharedDown, "text_config.hidden_size, shared_expert_intermediate_size", H, Is)
		add("backbone", q+"shared_expert_gate.weight", &m.SharedExpertGate, "text_config.hidden_size", 1, H)
	}

	return s
}

// towerTable is the tower's part of the table; hidden is the backbone width
// (text_config.hidden_size) the codebook embeddings feed.
func towerTable[T any](a *AudioConfig, H int, w *Tower[T]) []slot[T] {
	var s []slot[T]
	add := func(group, name string, dst *T, keys string, shape ...int) {
		s = append(s, slot[T]{group: group, name: name, dst: dst, shape: shape, keys: keys})
	}
	for i := range w.Embeddings {
		keys := "audio_decoder_config.vocab_size, text_config.hidden_size"
		if i == 0 {
			keys = "audio_decoder_config.semantic_vocab_size, text_config.hidden_size"
		}
		add("audio", fmt.Sprintf("codebook_embeddings.%d.weight", i), &w.Embeddings[i], keys, a.CodebookEntries(i), H)
	}

	D, hd, I := a.Dim, a.HeadDim, a.IntermediateSize
	tower := func(p string, L *TowerLayer[T], head bool) {
		add("audio", p+"enorm.weight", &L.ENorm, "audio_decoder_config.dim", D)
		add("audio", p+"hnorm.weight", &L.HNorm, "audio_decoder_config.dim", D)
		add("audio", p+"eh_proj.weight", &L.EHProj, "audio_decoder_config.dim (×2 inputs)", D, 2*D)
		add("audio", p+"attention_norm.weight", &L.AttentionNorm, "audio_decoder_config.dim", D)
		add("audio", p+"attention.wqkv.weight", &L.WQKV, "audio_decoder_config.n_head, n_local_heads, head_dim, dim", (a.NumHeads+2*a.NumKVHeads)*hd, D)
		add("audio", p+"attention.wo.weight", &L.WO, "audio_decoder_config.dim, n_head, head_dim", D, a.NumHeads*hd)
		add("audio", p+"ffn_norm.weight", &L.FFNNorm, "audio_decoder_config.dim", D)
		add("audio", p+"feed_forward.w1.weight", &L.W1, "audio_decoder_config.intermediate_size, dim", I, D)
		add("audio", p+"feed_forward.w3.weight", &L.W3, "audio_decoder_config.intermediate_size, dim", I, D)
		add("audio", p+"feed_forward.w2.weight", &L.W2, "audio_decoder_config.dim, intermediate_size", D, I)
		add("audio", p+"out_norm.weight", &L.OutNorm, "audio_decoder_config.dim", D)
		if head {
			add("audio", p+"head.weight", &L.Head, "audio_decoder_config.vocab_size, dim", a.CodebookSize, D)
		}
	}
	for i := range w.Shared {
		tower(fmt.Sprintf("audio_decoder_mtp_shared.layers.%d.", i), &w.Shared[i], false)
	}
	for i := range w.Residual {
		tower(fmt.Sprintf("audio_decoder_mtp.layers.%d.", i), &w.Residual[i], true)
	}
	return s
}

// BindReport is what binding found besides the placed tensors.
type BindReport struct {
	Missing  []string // expected tensors not in the checkpoint (full names)
	Unplaced []string // stored tensors the map has no place for
	Problems []string // dtype/shape mismatches and contradictions, each naming tensor and key
}

// Err is nil when every expected tensor is present and well-formed;
// unplaced tensors alone are not an error.
func (r *BindReport) Err() error {
	var parts []string
	if len(r.Problems) > 0 {
		parts = append(parts, r.Problems[0])
		if len(r.Problems) > 1 {
			parts[0] += fmt.Sprintf(" (and %d more problems)", len(r.Problems)-1)
		}
	}
	if len(r.Missing) > 0 {
		m := fmt.Sprintf("missing tensor %s", r.Missing[0])
		if len(r.Missing) > 1 {
			m += fmt.Sprintf(" (and %d more missing)", len(r.Missing)-1)
		}
		parts = append(parts, m)
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(parts, "; "))
}

// Bind places the stored tensors (their metadata) into a Weights tree for
// cfg. It always returns the tree and a report; the report's Err says whether
// the tree is complete. reader (may be nil) is what Read uses later.
func Bind(cfg *Config, stored []*Param, reader TensorReader) (*Weights, *BindReport) {
	rep := &BindReport{}
	byName := make(map[string]*Param, len(stored))
	for _, p := range stored {
		if _, dup := byName[p.Name]; dup {
			rep.Problems = append(rep.Problems, fmt.Sprintf("tensor %s: stored twice", p.Name))
			continue
		}
		byName[p.Name] = p
	}
	w := &Weights{Config: cfg, reader: reader}
	var err error
	if w.BackbonePrefix, err = findPrefix(byName, backboneAnchor); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	if w.AudioPrefix, err = findPrefix(byName, audioAnchor); err != nil {
		rep.Problems = append(rep.Problems, err.Error())
	}
	// The LM head is absent from tied checkpoints: only ambiguity is a problem here.
	rootPrefix, err := findPrefix(byName, lmHeadName)
	if err != nil && !errors.Is(err, errNoAnchor) {
		rep.Problems = append(rep.Problems, err.Error())
	}
	prefix := map[string]string{"backbone": w.BackbonePrefix, "audio": w.AudioPrefix, "root": rootPrefix}

	t := &cfg.Text
	fused := make([]bool, t.NumLayers)
	for i := range fused {
		lp := fmt.Sprintf("%slayers.%d.", w.BackbonePrefix, i)
		_, fused[i] = byName[lp+"mlp.experts.gate_up_proj"]
		hasLinear := hasPrefix(byName, lp+"linear_attn.")
		hasFull := hasPrefix(byName, lp+"self_attn.")
		switch kind := t.LayerTypes[i]; {
		case kind == LinearAttention && !hasLinear && hasFull:
			rep.Problems = append(rep.Problems, fmt.Sprintf("text_config.layer_types[%d] = %s but the checkpoint has %sself_attn.* (a full-attention layer)", i, kind, lp))
		case kind == FullAttention && !hasFull && hasLinear:
			rep.Problems = append(rep.Problems, fmt.Sprintf("text_config.layer_types[%d] = %s but the checkpoint has %slinear_attn.* (a linear-attention layer)", i, kind, lp))
		}
	}
	w.Model = *newModel[*Param](cfg, fused)

	used := make(map[string]bool, len(stored))
	for _, s := range table(cfg, &w.Model) {
		name := prefix[s.group] + s.name
		p := byName[name]
		if p == nil {
			if !s.optional {
				rep.Missing = append(rep.Missing, name)
			}
			continue
		}
		used[name] = true
		if msg := checkSlot(cfg, s, p); msg != "" {
			rep.Problems = append(rep.Problems, msg)
			continue
		}
		if s.class == expert && p.DType == checkpoint.F8E4M3 {
			scaleName := prefix[s.group] + s.scale
			sp := byName[scaleName]
			if sp == nil {
				rep.Missing = append(rep.Missing, scaleName)
				continue
			}
			used[scaleName] = true
			if msg := checkScale(cfg, p, sp); msg != "" {
				rep.Problems = append(rep.Problems, msg)
				continue
			}
			p.Scale = sp
		}
		*s.dst = p
	}
	if t.TieWordEmbeddings {
		w.LMHead = w.Embed // a stored lm_head.weight stays unplaced (listed)
	}
	for _, p := range stored {
		if !used[p.Name] {
			rep.Unplaced = append(rep.Unplaced, p.Name)
		}
	}
	sort.Strings(rep.Unplaced)
	return w, rep
}

// newModel makes the empty tree for cfg: layers with their mixer and
// expert layout (fused[i]: layer i stores 3-D expert tensors), the codebook
// and tower slices.
func newModel[T any](cfg *Config, fused []bool) *Model[T] {
	t, a := &cfg.Text, &cfg.Audio
	m := &Model[T]{}
	m.Layers = make([]Layer[T], t.NumLayers)
	for i := range m.Layers {
		L := &m.Layers[i]
		L.Kind = t.LayerTypes[i]
		if L.Kind == LinearAttention {
			L.Linear = &DeltaNet[T]{}
		} else {
			L.Full = &Attention[T]{}
		}
		L.MoE.Fused = fused[i]
		if !fused[i] {
			L.MoE.Experts = make([]Expert[T], t.NumExperts)
		}
	}
	m.Tower.Embeddings = make([]T, a.NumCodebooks)
	m.Tower.Shared = make([]TowerLayer[T], a.SharedLayers)
	m.Tower.Residual = make([]TowerLayer[T], a.ResidualLayers())
	return m
}

// layout is m's expert layout per layer, for newModel.
func (m *Model[T]) layout() []bool {
	fused := make([]bool, len(m.Layers))
	for i := range m.Layers {
		fused[i] = m.Layers[i].MoE.Fused
	}
	return fused
}

// Map makes the tree of another handle type from m, calling f once for each
// distinct value of m in table order (a tied LM head is the embedding's
// value, mapped once; an absent optional tensor is T's zero value, which f
// receives too). name is the tensor's name relative to its prefix. The CPU
// maps handles to float32 slices, a GPU backend to device pointers.
func Map[T comparable, U any](cfg *Config, m *Model[T], f func(name string, v T) (U, error)) (*Model[U], error) {
	if len(m.Layers) != cfg.Text.NumLayers || len(m.Tower.Embeddings) != cfg.Audio.NumCodebooks ||
		len(m.Tower.Shared) != cfg.Audio.SharedLayers || len(m.Tower.Residual) != cfg.Audio.ResidualLayers() {
		return nil, fmt.Errorf("weights: tree of %d layers, %d codebooks, %d+%d tower layers does not match the config",
			len(m.Layers), len(m.Tower.Embeddings), len(m.Tower.Shared), len(m.Tower.Residual))
	}
	for i := range m.Layers {
		if m.Layers[i].Kind != cfg.Text.LayerTypes[i] {
			return nil, fmt.Errorf("weights: layer %d is %s, text_config.layer_types says %s", i, m.Layers[i].Kind, cfg.Text.LayerTypes[i])
		}
	}
	out := newModel[U](cfg, m.layout())
	src, dst := table(cfg, m), table(cfg, out)
	done := make(map[T]U, len(src))
	for i, s := range src {
		v := *s.dst
		u, ok := done[v]
		if !ok {
			var err error
			if u, err = f(s.name, v); err != nil {
				return nil, err
			}
			done[v] = u
		}
		*dst[i].dst = u
	}
	if cfg.Text.TieWordEmbeddings {
		out.LMHead = out.Embed
	}
	return out, nil
}

// CheckBackbone checks a backbone tree of any handle type against t: the
// mixer and expert layout of each layer, and the element count size(v) of
// every tensor against the table's shape, naming the first mismatch and the
// config keys that set it. The LM head is not checked: backends take only
// the rows they need from the bound handle.
func CheckBackbone[T any](t *TextConfig, b *Backbone[T], size func(v T) int) error {
	if len(b.Layers) != t.NumLayers || len(t.LayerTypes) != t.NumLayers {
		return fmt.Errorf("backbone weights: %d layers, text_config.num_hidden_layers is %d with %d layer_types", len(b.Layers), t.NumLayers, len(t.LayerTypes))
	}
	for i := range b.Layers {
		L := &b.Layers[i]
		if L.Kind != t.LayerTypes[i] || (L.Linear != nil) != (L.Kind == LinearAttention) || (L.Full != nil) == (L.Kind == LinearAttention) {
			return fmt.Errorf("backbone weights: layer %d: text_config.layer_types[%d] is %s; the tree's mixer does not match", i, i, t.LayerTypes[i])
		}
		if !L.MoE.Fused && len(L.MoE.Experts) != t.NumExperts {
			return fmt.Errorf("backbone weights: layer %d has %d experts, text_config.num_experts is %d", i, len(L.MoE.Experts), t.NumExperts)
		}
	}
	return checkSizes("backbone weights", backboneTable(t, b), size)
}

// CheckTower is CheckBackbone for the tower and the codebook embeddings;
// hidden is text_config.hidden_size.
func CheckTower[T any](a *AudioConfig, hidden int, tw *Tower[T], size func(v T) int) error {
	if len(tw.Embeddings) != a.NumCodebooks || len(tw.Shared) != a.SharedLayers || len(tw.Residual) != a.ResidualLayers() {
		return fmt.Errorf("tower weights: %d codebook embeddings, %d shared and %d residual layers; audio_decoder_config needs %d, %d, %d",
			len(tw.Embeddings), len(tw.Shared), len(tw.Residual), a.NumCodebooks, a.SharedLayers, a.ResidualLayers())
	}
	return checkSizes("tower weights", towerTable(a, hidden, tw), size)
}

func checkSizes[T any](part string, slots []slot[T], size func(v T) int) error {
	for _, s := range slots {
		if s.name == lmHeadName {
			continue
		}
		want := 1
		for _, d := range s.shape {
			want *= d
		}
		if got := size(*s.dst); got != want {
			return fmt.Errorf("%s: %s has %d elements, want %s = %d from %s", part, strings.TrimSuffix(s.name, ".weight"), got, shapeString(s.shape), want, s.keys)
		}
	}
	return nil
}

// Expected is one tensor the weight map expects, for writers and estimates.
type Expected struct {
	Group    string // "backbone", "audio" or "root"
	Name     string // relative to the group's prefix
	Shape    []int
	Expert   bool // a routed-expert matrix (block-FP8 when the config says fp8)
	Scale    string
	Optional bool
}

// NumElements is the product of the shape.
func (e Expected) NumElements() int64 {
	n := int64(1)
	for _, d := range e.Shape {
		n *= int64(d)
	}
	return n
}

// ExpectedTensors lists every tensor of cfg in table order, with the
// per-expert or the fused expert layout.
func ExpectedTensors(cfg *Config, fusedExperts bool) []Expected {
	fused := make([]bool, cfg.Text.NumLayers)
	for i := range fused {
		fused[i] = fusedExperts
	}
	var out []Expected
	for _, s := range table(cfg, newModel[*Param](cfg, fused)) {
		out = append(out, Expected{Group: s.group, Name: s.name, Shape: s.shape, Expert: s.class == expert, Scale: s.scale, Optional: s.optional})
	}
	return out
}

var errNoAnchor = errors.New("no tensor named")

// findPrefix finds the one prefix under which anchor is stored ("" or a
// dotted path ending in ".").
func findPrefix(byName map[string]*Param, anchor string) (string, error) {
	var found []string
	for name := range byName {
		if name == anchor {
			found = append(found, "")
		} else if strings.HasSuffix(name, "."+anchor) {
			found = append(found, strings.TrimSuffix(name, anchor))
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w *%s: cannot locate its prefix", errNoAnchor, anchor)
	case 1:
		return found[0], nil
	}
	sort.Strings(found)
	return "", fmt.Errorf("tensor %s found under several prefixes %q", anchor, found)
}

func hasPrefix(byName map[string]*Param, prefix string) bool {
	for name := range byName {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// checkSlot checks dtype and shape of p for slot s; "" when it fits.
func checkSlot(cfg *Config, s slot[*Param], p *Param) string {
	isDense := p.DType == checkpoint.BF16 || p.DType == checkpoint.F16 || p.DType == checkpoint.F32
	switch {
	case s.class == expert && cfg.Quant.FP8() && p.DType != checkpoint.F8E4M3:
		return fmt.Sprintf("tensor %s: dtype %s, but quantization_config.quant_method is fp8 (want F8_E4M3)", p.Name, p.DType)
	case s.class == expert && !cfg.Quant.FP8() && p.DType == checkpoint.F8E4M3:
		return fmt.Sprintf("tensor %s: dtype F8_E4M3 but config.json has no fp8 quantization_config", p.Name)
	case s.class == dense && !isDense:
		return fmt.Sprintf("tensor %s: dtype %s, want BF16, F16 or F32", p.Name, p.DType)
	case s.class == expert && !isDense && p.DType != checkpoint.F8E4M3:
		return fmt.Sprintf("tensor %s: dtype %s, want F8_E4M3, BF16, F16 or F32", p.Name, p.DType)
	}
	if !slices.Equal(p.Shape, s.shape) {
		return fmt.Sprintf("tensor %s: shape %s, want %s from %s", p.Name, shapeString(p.Shape), shapeString(s.shape), s.keys)
	}
	return ""
}

// checkScale checks an FP8 weight's block scale table: float32,
// [(E,) ceil(rows/br), ceil(cols/bc)].
func checkScale(cfg *Config, w, s *Param) string {
	br, bc := cfg.Quant.BlockRows, cfg.Quant.BlockCols
	n := len(w.Shape)
	want := append([]int(nil), w.Shape[:n-2]...)
	want = append(want, ceilDiv(w.Shape[n-2], br), ceilDiv(w.Shape[n-1], bc))
	if s.DType != checkpoint.F32 {
		return fmt.Sprintf("tensor %s: dtype %s, want F32 (block scales)", s.Name, s.DType)
	}
	if !slices.Equal(s.Shape, want) {
		return fmt.Sprintf("tensor %s: shape %s, want %s for %s %s in blocks of quantization_config.weight_block_size [%d, %d]",
			s.Name, shapeString(s.Shape), shapeString(want), w.Name, shapeString(w.Shape), br, bc)
	}
	return ""
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// Params lists every bound handle in table order (FP8 scales follow their weight).
func (w *Weights) Params() []*Param {
	var out []*Param
	for _, s := range table(w.Config, &w.Model) {
		if p := *s.dst; p != nil {
			out = append(out, p)
			if p.Scale != nil {
				out = append(out, p.Scale)
			}
		}
	}
	return out
}

// StoredBytes is the data size of every bound tensor (scales included) as
// stored: what a loader copies to the device.
func (w *Weights) StoredBytes() int64 {
	var n int64
	for _, p := range w.Params() {
		n += p.Size
	}
	return n
}

// Read returns the stored bytes of p through the checkpoint reader.
func (w *Weights) Read(p *Param) (*checkpoint.Tensor, error) {
	if w.reader == nil {
		return nil, fmt.Errorf("tensor %s: weights were bound without a reader", p.Name)
	}
	t, err := w.reader.ReadTensor(p.Name)
	if err != nil {
		return nil, err
	}
	if t.DType != p.DType || !slices.Equal(t.Shape, p.Shape) {
		return nil, fmt.Errorf("tensor %s: read %s %s, bound as %s %s", p.Name, t.DType, shapeString(t.Shape), p.DType, shapeString(p.Shape))
	}
	return t, nil
}

// Float32 reads p as float32, row-major in its stored shape. F8_E4M3 tensors
// are dequantised with their block scales (2-D, or 3-D per leading index).
func (w *Weights) Float32(p *Param) ([]float32, error) {
	t, err := w.Read(p)
	if err != nil {
		return nil, err
	}
	if p.DType != checkpoint.F8E4M3 {
		return t.Float32s()
	}
	if p.Scale == nil || len(p.Shape) < 2 {
		return nil, fmt.Errorf("tensor %s: F8_E4M3 without a block scale table", p.Name)
	}
	st, err := w.Read(p.Scale)
	if err != nil {
		return nil, err
	}
	scales, err := st.Float32s()
	if err != nil {
		return nil, err
	}
	br, bc := w.Config.Quant.BlockRows, w.Config.Quant.BlockCols
	if br != bc {
		return nil, fmt.Errorf("tensor %s: non-square weight_block_size [%d, %d] is not supported", p.Name, br, bc)
	}
	n := len(p.Shape)
	rows, cols := p.Shape[n-2], p.Shape[n-1]
	mats := int(p.NumElements()) / (rows * cols)
	per := ceilDiv(rows, br) * ceilDiv(cols, bc)
	out := make([]float32, 0, p.NumElements())
	for m := 0; m < mats; m++ {
		out = append(out, checkpoint.DequantFP8Blocks(t.Data[m*rows*cols:(m+1)*rows*cols], rows, cols, scales[m*per:(m+1)*per], br)...)
	}
	return out, nil
}

// ExpertSlices is routed expert e of a layer whose tensors are slices of
// values (float32 on the CPU), in either layout: fused gate_up holds each
// expert's I gate rows then its I up rows, fused down one [hidden, I] matrix
// per expert. The result shares m's storage.
func ExpertSlices[E any](m *MoE[[]E], e int, t *TextConfig) Expert[[]E] {
	if !m.Fused {
		return m.Experts[e]
	}
	H, I := t.HiddenSize, t.MoEIntermediate
	base := e * 2 * I * H
	return Expert[[]E]{
		Gate: m.GateUp[base : base+I*H : base+I*H],
		Up:   m.GateUp[base+I*H : base+2*I*H : base+2*I*H],
		Down: m.Down[e*H*I : (e+1)*H*I : (e+1)*H*I],
	}
}

// Float32Model reads every bound tensor as float32 (Float32), each once.
func (w *Weights) Float32Model() (*Model[[]float32], error) {
	return Map(w.Config, &w.Model, func(_ string, p *Param) ([]float32, error) {
		if p == nil {
			return nil, nil
		}
		return w.Float32(p)
	})
}

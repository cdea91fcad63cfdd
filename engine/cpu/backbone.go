package cpu

import (
	"fmt"
)

// This file holds the backbone (MODEL.md §2, the Qwen3.5-MoE hybrid): its
// geometry, its float32 weights, and the stateful Backbone that appends rows
// and returns their final-norm hidden states. The mixers live in
// deltanet.go and attention.go, the feed-forward in moe.go.

// LayerKind says which token mixer a backbone layer uses.
type LayerKind int

// The two mixers of the hybrid (config.json `layer_types`).
const (
	LinearAttention LayerKind = iota // Gated DeltaNet ("linear_attention")
	FullAttention                    // gated softmax attention ("full_attention")
)

func (k LayerKind) String() string {
	switch k {
	case LinearAttention:
		return "linear_attention"
	case FullAttention:
		return "full_attention"
	}
	return fmt.Sprintf("LayerKind(%d)", int(k))
}

// BackboneGeometry is every dimension of the backbone, read from config.json
// (text_config) by the caller; nothing here is hard-coded.
type BackboneGeometry struct {
	Hidden int
	Vocab  int
	Layers []LayerKind
	Eps    float32 // rms_norm_eps: decoder norms, q/k norms and the DeltaNet output norm

	// Gated full attention.
	Heads, KVHeads, HeadDim int
	RotaryDim               int     // head_dim·partial_rotary_factor: rotate-half RoPE on these leading dims
	RopeTheta               float64 // rope_theta

	// Gated DeltaNet.
	LinKeyHeads, LinValueHeads int
	LinKeyDim, LinValueDim     int
	ConvKernel                 int

	// Mixture of experts.
	Experts, TopK        int
	ExpertFFN, SharedFFN int
}

// Validate checks that the geometry is usable: positive sizes and the
// divisibility the head groupings need.
func (g *BackboneGeometry) Validate() error {
	pos := []struct {
		name string
		v    int
	}{
		{"hidden_size", g.Hidden}, {"vocab_size", g.Vocab}, {"num_hidden_layers", len(g.Layers)},
		{"num_experts", g.Experts}, {"num_experts_per_tok", g.TopK},
		{"moe_intermediate_size", g.ExpertFFN}, {"shared_expert_intermediate_size", g.SharedFFN},
	}
	var hasLin, hasFull bool
	for _, k := range g.Layers {
		switch k {
		case LinearAttention:
			hasLin = true
		case FullAttention:
			hasFull = true
		default:
			return fmt.Errorf("backbone geometry: unknown layer kind %v", k)
		}
	}
	if hasFull {
		pos = append(pos, []struct {
			name string
			v    int
		}{{"num_attention_heads", g.Heads}, {"num_key_value_heads", g.KVHeads}, {"head_dim", g.HeadDim}}...)
	}
	if hasLin {
		pos = append(pos, []struct {
			name string
			v    int
		}{{"linear_num_key_heads", g.LinKeyHeads}, {"linear_num_value_heads", g.LinValueHeads},
			{"linear_key_head_dim", g.LinKeyDim}, {"linear_value_head_dim", g.LinValueDim},
			{"linear_conv_kernel_dim", g.ConvKernel}}...)
	}
	for _, p := range pos {
		if p.v <= 0 {
			return fmt.Errorf("backbone geometry: %s = %d, want > 0", p.name, p.v)
		}
	}
	if g.TopK > g.Experts {
		return fmt.Errorf("backbone geometry: num_experts_per_tok %d > num_experts %d", g.TopK, g.Experts)
	}
	if !(g.Eps > 0) {
		return fmt.Errorf("backbone geometry: rms_norm_eps = %g, want > 0", g.Eps)
	}
	if hasFull {
		if g.Heads%g.KVHeads != 0 {
			return fmt.Errorf("backbone geometry: num_attention_heads %d is not a multiple of num_key_value_heads %d", g.Heads, g.KVHeads)
		}
		if g.RotaryDim < 0 || g.RotaryDim > g.HeadDim || g.RotaryDim%2 != 0 {
			return fmt.Errorf("backbone geometry: rotary dims %d must be even and within head_dim %d", g.RotaryDim, g.HeadDim)
		}
		if g.RotaryDim > 0 && !(g.RopeTheta > 0) {
			return fmt.Errorf("backbone geometry: rope_theta = %g, want > 0", g.RopeTheta)
		}
	}
	if hasLin && g.LinValueHeads%g.LinKeyHeads != 0 {
		return fmt.Errorf("backbone geometry: linear_num_value_heads %d is not a multiple of linear_num_key_heads %d", g.LinValueHeads, g.LinKeyHeads)
	}
	return nil
}

// BackboneWeights is the backbone in float32, row-major, each matrix [out, in]
// like torch's Linear. Experts are already dequantised from their FP8 blocks.
type BackboneWeights struct {
	Geometry  BackboneGeometry
	Embed     []float32 // [Vocab, Hidden]
	FinalNorm []float32 // [Hidden], zero-centred
	Layers    []BackboneLayerWeights
}

// BackboneLayerWeights is one decoder layer: exactly one of DeltaNet and
// Attention is set, matching Geometry.Layers.
type BackboneLayerWeights struct {
	InputNorm []float32 // [Hidden], zero-centred
	PostNorm  []float32 // [Hidden], zero-centred
	DeltaNet  *DeltaNetWeights
	Attention *AttentionWeights
	MoE       MoEWeights
}

// Check verifies every tensor's length against the geometry, naming the
// first one that is wrong.
func (w *BackboneWeights) Check() error {
	g := &w.Geometry
	if err := g.Validate(); err != nil {
		return err
	}
	if len(w.Layers) != len(g.Layers) {
		return fmt.Errorf("backbone weights: %d layers, geometry has %d", len(w.Layers), len(g.Layers))
	}
	c := sizeChecker{part: "backbone weights"}
	c.want("embed_tokens", w.Embed, g.Vocab*g.Hidden)
	c.want("norm", w.FinalNorm, g.Hidden)
	for i := range w.Layers {
		l := &w.Layers[i]
		p := fmt.Sprintf("layers.%d.", i)
		c.want(p+"input_layernorm", l.InputNorm, g.Hidden)
		c.want(p+"post_attention_layernorm", l.PostNorm, g.Hidden)
		switch g.Layers[i] {
		case LinearAttention:
			if l.DeltaNet == nil || l.Attention != nil {
				return fmt.Errorf("backbone weights: layer %d is linear_attention: needs DeltaNet weights only", i)
			}
			l.DeltaNet.check(&c, p+"linear_attn.", g)
		case FullAttention:
			if l.Attention == nil || l.DeltaNet != nil {
				return fmt.Errorf("backbone weights: layer %d is full_attention: needs Attention weights only", i)
			}
			l.Attention.check(&c, p+"self_attn.", g)
		}
		l.MoE.check(&c, p+"mlp.", g)
	}
	return c.err
}

// sizeChecker records the first tensor whose length differs from the
// geometry (the backbone's and the tower's weight checks).
type sizeChecker struct {
	part string // "backbone weights", "tower weights": starts the error
	err  error
}

func (c *sizeChecker) want(name string, v []float32, n int) {
	if c.err == nil && len(v) != n {
		c.err = fmt.Errorf("%s: %s has %d elements, geometry needs %d", c.part, name, len(v), n)
	}
}

// BackboneRow is one appended row: a token id, or (when Embedding is not nil)
// a given input embedding of Hidden values, such as an audio feedback row.
type BackboneRow struct {
	Token     int
	Embedding []float32
}

// TokenRows wraps token ids as rows.
func TokenRows(ids []int) []BackboneRow {
	rows := make([]BackboneRow, len(ids))
	for i, id := range ids {
		rows[i].Token = id
	}
	return rows
}

// Backbone runs the backbone over a growing sequence: each Run appends rows
// and keeps the per-layer state (DeltaNet conv and recurrent states, the
// attention KV caches) for the next. It is not safe for concurrent use.
type Backbone struct {
	w      *BackboneWeights
	rope   *ropeTable
	layers []layerState
	pos    int // rows appended so far

	// LayerOutput, when set, receives each layer's output hidden states
	// [n, Hidden] (after the MoE residual) during Run; it must not keep hidden.
	LayerOutput func(layer int, hidden []float32)
}

// layerState is the state one layer keeps across Run calls.
type layerState struct {
	deltaNet *deltaNetState
	kv       *kvCache
}

// NewBackbone checks the weights and returns a backbone with empty state.
func NewBackbone(w *BackboneWeights) (*Backbone, error) {
	if err := w.Check(); err != nil {
		return nil, err
	}
	b := &Backbone{w: w, layers: make([]layerState, len(w.Layers))}
	g := &w.Geometry
	b.rope = newRopeTable(g.RotaryDim, g.RopeTheta)
	b.Reset()
	return b, nil
}

// Geometry is the backbone's geometry.
func (b *Backbone) Geometry() BackboneGeometry { return b.w.Geometry }

// Len is the number of rows appended since the last Reset.
func (b *Backbone) Len() int { return b.pos }

// Reset forgets every appended row.
func (b *Backbone) Reset() {
	g := &b.w.Geometry
	for i, k := range g.Layers {
		switch k {
		case LinearAttention:
			b.layers[i] = layerState{deltaNet: newDeltaNetState(g)}
		case FullAttention:
			b.layers[i] = layerState{kv: &kvCache{}}
		}
	}
	b.pos = 0
}

// Run appends rows and returns their final-norm hidden states, [len(rows),
// Hidden] row-major. Several rows are a prefill (DeltaNet in its chunked
// form); one row is a step (the recurrence). A bad row changes nothing.
func (b *Backbone) Run(rows []BackboneRow) ([]float32, error) {
	g := &b.w.Geometry
	n, hid := len(rows), g.Hidden
	if n == 0 {
		return nil, nil
	}
	x := make([]float32, n*hid)
	for i, r := range rows {
		dst := x[i*hid : (i+1)*hid]
		if r.Embedding != nil {
			if len(r.Embedding) != hid {
				return nil, fmt.Errorf("backbone row %d: embedding has %d values, hidden size is %d", i, len(r.Embedding), hid)
			}
			copy(dst, r.Embedding)
			continue
		}
		if r.Token < 0 || r.Token >= g.Vocab {
			return nil, fmt.Errorf("backbone row %d: token id %d outside the vocabulary [0, %d)", i, r.Token, g.Vocab)
		}
		copy(dst, b.w.Embed[r.Token*hid:(r.Token+1)*hid])
	}

	normed := make([]float32, n*hid)
	mixed := make([]float32, n*hid)
	for li := range b.w.Layers {
		lw := &b.w.Layers[li]
		rmsNormRows(normed, x, lw.InputNorm, n, hid, g.Eps)
		switch g.Layers[li] {
		case LinearAttention:
			deltaNetForward(mixed, normed, n, lw.DeltaNet, g, b.layers[li].deltaNet)
		case FullAttention:
			attentionForward(mixed, normed, n, b.pos, lw.Attention, g, b.rope, b.layers[li].kv)
		}
		Add(x, mixed)
		rmsNormRows(normed, x, lw.PostNorm, n, hid, g.Eps)
		moeForward(mixed, normed, n, &lw.MoE, g)
		Add(x, mixed)
		if b.LayerOutput != nil {
			b.LayerOutput(li, x)
		}
	}
	b.pos += n
	rmsNormRows(x, x, b.w.FinalNorm, n, hid, g.Eps)
	return x, nil
}

// rmsNormRows applies the zero-centred RMSNorm to each of n rows of width w.
func rmsNormRows(dst, x, weight []float32, n, w int, eps float32) {
	parallelFor(n, n*w, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			RMSNormZeroCentred(dst[i*w:(i+1)*w], x[i*w:(i+1)*w], weight, eps)
		}
	})
}

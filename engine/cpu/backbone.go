package cpu

import (
	"fmt"

	"proscenium/engine/drama3"
)

// This file holds the backbone (MODEL.md §2, the Qwen3.5-MoE hybrid): the
// stateful Backbone that appends rows and returns their final-norm hidden
// states, over the float32 tree of drama3.Backbone and the geometry of
// text_config. The mixers live in
// deltanet.go and attention.go, the feed-forward in moe.go.

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
	cfg    *drama3.TextConfig
	w      *drama3.Backbone[[]float32]
	rope   *ropeTable
	layers []layerState
	pos    int // rows appended so far

	// LayerOutput, when set, receives each layer's output hidden states
	// [n, Hidden] (after the MoE residual) during Run; it must not keep hidden.
	LayerOutput func(layer int, hidden []float32)

	// Route, when set, sees every row's routing in every layer (its top-k
	// margin) and may force swaps (route_tap.go); nil costs nothing.
	Route *RouteTap
}

// layerState is the state one layer keeps across Run calls.
type layerState struct {
	deltaNet *deltaNetState
	kv       *kvCache
}

// NewBackbone checks the weights against t and returns a backbone with
// empty state.
func NewBackbone(t *drama3.TextConfig, w *drama3.Backbone[[]float32]) (*Backbone, error) {
	if err := drama3.CheckBackbone(t, w, floats); err != nil {
		return nil, err
	}
	b := &Backbone{cfg: t, w: w, layers: make([]layerState, len(w.Layers))}
	b.rope = newRopeTable(t.RotaryDim(), t.RopeTheta)
	b.Reset()
	return b, nil
}

// floats is the element count of a float32 tensor (for drama3's size checks).
func floats(v []float32) int { return len(v) }

// Config is the backbone's geometry.
func (b *Backbone) Config() *drama3.TextConfig { return b.cfg }

// Len is the number of rows appended since the last Reset.
func (b *Backbone) Len() int { return b.pos }

// Reset forgets every appended row.
func (b *Backbone) Reset() {
	g := b.cfg
	for i, k := range g.LayerTypes {
		switch k {
		case drama3.LinearAttention:
			b.layers[i] = layerState{deltaNet: newDeltaNetState(g)}
		default:
			b.layers[i] = layerState{kv: &kvCache{}}
		}
	}
	b.pos = 0
}

// Run appends rows and returns their final-norm hidden states, [len(rows),
// Hidden] row-major. Several rows are a prefill (DeltaNet in its chunked
// form); one row is a step (the recurrence). A bad row changes nothing.
func (b *Backbone) Run(rows []BackboneRow) ([]float32, error) {
	g := b.cfg
	n, hid := len(rows), g.HiddenSize
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
		if r.Token < 0 || r.Token >= g.VocabSize {
			return nil, fmt.Errorf("backbone row %d: token id %d outside the vocabulary [0, %d)", i, r.Token, g.VocabSize)
		}
		copy(dst, b.w.Embed[r.Token*hid:(r.Token+1)*hid])
	}

	normed := make([]float32, n*hid)
	mixed := make([]float32, n*hid)
	for li := range b.w.Layers {
		lw := &b.w.Layers[li]
		rmsNormRows(normed, x, lw.InputNorm, n, hid, float32(g.RMSNormEps))
		if lw.Linear != nil {
			deltaNetForward(mixed, normed, n, lw.Linear, g, b.layers[li].deltaNet)
		} else {
			attentionForward(mixed, normed, n, b.pos, lw.Full, g, b.rope, b.layers[li].kv)
		}
		Add(x, mixed)
		rmsNormRows(normed, x, lw.PostAttentionNorm, n, hid, float32(g.RMSNormEps))
		moeForward(mixed, normed, n, &lw.MoE, g, b.routeRows(li))
		Add(x, mixed)
		if b.LayerOutput != nil {
			b.LayerOutput(li, x)
		}
	}
	b.pos += n
	rmsNormRows(x, x, b.w.FinalNorm, n, hid, float32(g.RMSNormEps))
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

package drama3

import "proscenium/engine/checkpoint"

// This file counts parameters from the geometry and estimates the device
// memory a model needs for a context length: weights as stored, the caches
// every row leaves behind, the fixed recurrent state and the scratch a step
// uses. The admission check and `proscenium inspect` use it.

// ParameterCount is the number of weight elements the geometry implies
// (FP8 block scales are not parameters).
type ParameterCount struct {
	Text  int64 // backbone: embeddings, layers, final norm, untied LM head
	Audio int64 // tower layers, heads and codebook embeddings
}

// Total is Text + Audio.
func (p ParameterCount) Total() int64 { return p.Text + p.Audio }

// CountParameters counts the expected tensors of cfg (the optional semantic
// head is not counted: the LM head rows serve when it is absent).
func CountParameters(cfg *Config) ParameterCount {
	var pc ParameterCount
	// The fused expert layout has the same elements in 2 tensors per layer
	// instead of 3 per expert: quicker to list.
	for _, e := range ExpectedTensors(cfg, true) {
		if e.Optional {
			continue
		}
		n := e.NumElements()
		if e.Group == "audio" {
			pc.Audio += n
		} else {
			pc.Text += n
		}
	}
	return pc
}

// StoredWeightBytes is the bytes of cfg's weights in the standard storage:
// routed experts F8_E4M3 plus float32 block scales when the config says fp8,
// everything else BF16.
func StoredWeightBytes(cfg *Config) int64 {
	var b int64
	for _, e := range ExpectedTensors(cfg, false) {
		if e.Optional {
			continue
		}
		n := e.NumElements()
		if e.Expert && cfg.Quant.FP8() {
			r, c := e.Shape[len(e.Shape)-2], e.Shape[len(e.Shape)-1]
			b += n*int64(checkpoint.F8E4M3.Size()) + n/int64(r*c)*int64(ceilDiv(r, cfg.Quant.BlockRows)*ceilDiv(c, cfg.Quant.BlockCols))*4
		} else {
			b += n * int64(checkpoint.BF16.Size())
		}
	}
	return b
}

// DefaultScratchRows is the prefill chunk (rows processed together) the
// scratch estimate assumes [assumption: the GPU backend prefills in chunks of
// at most this many rows].
const DefaultScratchRows = 512

// Memory is a device-memory estimate in bytes, by component.
type Memory struct {
	Context      int   `json:"context_rows"`        // rows the caches hold
	Weights      int64 `json:"weights_bytes"`       // as stored (BF16 2 B, FP8 1 B + scales)
	AttentionKV  int64 `json:"attention_kv_bytes"`  // full-attention layers: bf16 K and V per row
	DeltaNet     int64 `json:"deltanet_bytes"`      // linear-attention layers: fp32 state + conv window
	TowerKV      int64 `json:"tower_kv_bytes"`      // the tower's layers: bf16 K and V per row
	Scratch      int64 `json:"scratch_bytes"`       // activations of one prefill chunk and one step's logits
	ScratchRows  int   `json:"scratch_rows"`        // the chunk the scratch figure assumes
	Total        int64 `json:"total_bytes"`         // the sum
	PerRowCaches int64 `json:"per_row_cache_bytes"` // cache bytes each further row adds
}

// EstimateMemory estimates the device memory for cfg with weightBytes of
// stored weights and caches for context rows.
func EstimateMemory(cfg *Config, weightBytes int64, context int) Memory {
	t, a := &cfg.Text, &cfg.Audio
	const bf16, f32 = 2, 4
	full := int64(t.CountLayers(FullAttention))
	linear := int64(t.CountLayers(LinearAttention))
	rows := int64(context)

	perRowAttn := full * 2 * int64(t.NumKVHeads*t.HeadDim) * bf16
	perRowTower := int64(a.Layers()) * 2 * int64(a.NumKVHeads*a.HeadDim) * bf16
	state := int64(t.LinearNumValueHeads*t.LinearKeyHeadDim*t.LinearValueHeadDim) * f32
	conv := int64((t.ConvKernel-1)*t.LinearConvDim()) * f32

	p := DefaultScratchRows
	if context < p {
		p = max(context, 1)
	}
	H := t.HiddenSize
	// The widest per-row activation any one step keeps live besides the
	// residual stream: the mixer's input projections, the routed experts'
	// intermediates (top-k × gate and up), the shared expert's, the tower's.
	widest := max(
		2*t.NumHeads*t.HeadDim+2*t.NumKVHeads*t.HeadDim+t.NumHeads*t.HeadDim, // q+gate, k, v, attention output
		t.LinearConvDim()+t.LinearValueDim()+2*t.LinearNumValueHeads+t.LinearValueDim(),
		t.NumExperts+t.NumExpertsPerTok*2*t.MoEIntermediate+2*t.SharedIntermediate,
		2*a.Dim+(a.NumHeads+2*a.NumKVHeads)*a.HeadDim+2*a.IntermediateSize,
	)
	scratch := int64(p) * int64(4*H+widest) * f32
	// Logits of one row: the whole vocabulary (LM head) and one codebook.
	scratch += int64(t.VocabSize+a.CodebookSize) * f32

	m := Memory{
		Context:      context,
		Weights:      weightBytes,
		AttentionKV:  rows * perRowAttn,
		DeltaNet:     linear * (state + conv),
		TowerKV:      rows * perRowTower,
		Scratch:      scratch,
		ScratchRows:  p,
		PerRowCaches: perRowAttn + perRowTower,
	}
	m.Total = m.Weights + m.AttentionKV + m.DeltaNet + m.TowerKV + m.Scratch
	return m
}

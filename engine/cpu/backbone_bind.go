package cpu

import (
	"fmt"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// BackboneGeometryOf converts the config.json text_config into the
// backbone's geometry.
func BackboneGeometryOf(t *drama3.TextConfig) (BackboneGeometry, error) {
	g := BackboneGeometry{
		Hidden: t.HiddenSize, Vocab: t.VocabSize, Eps: float32(t.RMSNormEps),
		Heads: t.NumHeads, KVHeads: t.NumKVHeads, HeadDim: t.HeadDim,
		RotaryDim: t.RotaryDim(), RopeTheta: t.RopeTheta,
		LinKeyHeads: t.LinearNumKeyHeads, LinValueHeads: t.LinearNumValueHeads,
		LinKeyDim: t.LinearKeyHeadDim, LinValueDim: t.LinearValueHeadDim, ConvKernel: t.ConvKernel,
		Experts: t.NumExperts, TopK: t.NumExpertsPerTok, ExpertFFN: t.MoEIntermediate, SharedFFN: t.SharedIntermediate,
	}
	if len(t.LayerTypes) != t.NumLayers {
		return g, fmt.Errorf("text_config: %d layer_types for num_hidden_layers %d", len(t.LayerTypes), t.NumLayers)
	}
	for i, k := range t.LayerTypes {
		switch k {
		case drama3.LinearAttention:
			g.Layers = append(g.Layers, LinearAttention)
		case drama3.FullAttention:
			g.Layers = append(g.Layers, FullAttention)
		default:
			return g, fmt.Errorf("text_config.layer_types[%d]: unknown layer type %q", i, k)
		}
	}
	return g, g.Validate()
}

// paramReader widens bound checkpoint parameters to float32 and keeps the
// first error, so that a loader reads every tensor in one pass and checks
// once (the backbone and tower loaders share it).
type paramReader struct {
	w    *drama3.Weights
	part string // "backbone weights", "tower weights": starts the error
	err  error
}

// read returns p's values, or nil once an error has happened; what names the
// tensor in the error when p is not bound.
func (r *paramReader) read(p *drama3.Param, what string) []float32 {
	if r.err != nil {
		return nil
	}
	if p == nil {
		r.err = fmt.Errorf("%s: %s is not bound", r.part, what)
		return nil
	}
	v, err := r.w.Float32(p)
	if err != nil {
		r.err = err
	}
	return v
}

// LoadBackboneWeights reads the backbone's tensors from bound checkpoint
// weights into float32: BF16/F16 widened exactly, routed experts dequantised
// from their FP8 blocks (either expert layout).
func LoadBackboneWeights(w *drama3.Weights) (*BackboneWeights, error) {
	g, err := BackboneGeometryOf(&w.Config.Text)
	if err != nil {
		return nil, err
	}
	r := &paramReader{w: w, part: "backbone weights"}
	read := r.read
	bw := &BackboneWeights{Geometry: g}
	bw.Embed = read(w.Embed, "embed_tokens")
	bw.FinalNorm = read(w.FinalNorm, "norm")
	if len(w.Layers) != len(g.Layers) {
		return nil, fmt.Errorf("backbone weights: %d bound layers, config has %d", len(w.Layers), len(g.Layers))
	}
	for i := range w.Layers {
		L := &w.Layers[i]
		p := fmt.Sprintf("layers.%d.", i)
		l := BackboneLayerWeights{
			InputNorm: read(L.InputNorm, p+"input_layernorm"),
			PostNorm:  read(L.PostAttentionNorm, p+"post_attention_layernorm"),
		}
		switch {
		case L.Linear != nil:
			m := L.Linear
			l.DeltaNet = &DeltaNetWeights{
				InProjQKV: read(m.InProjQKV, p+"linear_attn.in_proj_qkv"),
				InProjZ:   read(m.InProjZ, p+"linear_attn.in_proj_z"),
				InProjB:   read(m.InProjB, p+"linear_attn.in_proj_b"),
				InProjA:   read(m.InProjA, p+"linear_attn.in_proj_a"),
				Conv:      read(m.Conv1D, p+"linear_attn.conv1d"), // [C, 1, K] is [C, K] row-major
				DtBias:    read(m.DtBias, p+"linear_attn.dt_bias"),
				ALog:      read(m.ALog, p+"linear_attn.A_log"),
				Norm:      read(m.Norm, p+"linear_attn.norm"),
				OutProj:   read(m.OutProj, p+"linear_attn.out_proj"),
			}
		case L.Full != nil:
			m := L.Full
			l.Attention = &AttentionWeights{
				Q:     read(m.QProj, p+"self_attn.q_proj"),
				K:     read(m.KProj, p+"self_attn.k_proj"),
				V:     read(m.VProj, p+"self_attn.v_proj"),
				O:     read(m.OProj, p+"self_attn.o_proj"),
				QNorm: read(m.QNorm, p+"self_attn.q_norm"),
				KNorm: read(m.KNorm, p+"self_attn.k_norm"),
			}
		}
		m := &L.MoE
		l.MoE = MoEWeights{
			Router: read(m.Router, p+"mlp.gate"),
			Shared: ExpertWeights{
				Gate: read(m.SharedGate, p+"mlp.shared_expert.gate_proj"),
				Up:   read(m.SharedUp, p+"mlp.shared_expert.up_proj"),
				Down: read(m.SharedDown, p+"mlp.shared_expert.down_proj"),
			},
			SharedGate: read(m.SharedExpertGate, p+"mlp.shared_expert_gate"), // [1, H] is [H]
		}
		if r.err != nil {
			return nil, r.err
		}
		gate, up, down, err := w.ExpertFloat32(i)
		if err != nil {
			return nil, err
		}
		for e := range gate {
			l.MoE.Experts = append(l.MoE.Experts, ExpertWeights{Gate: gate[e], Up: up[e], Down: down[e]})
		}
		bw.Layers = append(bw.Layers, l)
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := bw.Check(); err != nil {
		return nil, err
	}
	return bw, nil
}

// LoadBackboneDir reads config.json and the safetensors of a checkpoint
// directory and returns its backbone in float32.
func LoadBackboneDir(dir string) (*BackboneWeights, error) {
	cfg, err := drama3.LoadConfig(dir)
	if err != nil {
		return nil, err
	}
	ix, err := checkpoint.OpenSafetensors(dir)
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	var stored []*drama3.Param
	for _, ti := range ix.Tensors() {
		stored = append(stored, &drama3.Param{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, File: ti.File, Offset: ti.Offset, Size: ti.Size})
	}
	w, rep := drama3.Bind(cfg, stored, ix)
	if err := rep.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return LoadBackboneWeights(w)
}

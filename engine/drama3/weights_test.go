package drama3

import (
	"slices"
	"strings"
	"testing"

	"proscenium/engine/checkpoint"
)

func testConfig(t *testing.T, c *Config) *Config {
	t.Helper()
	if c.Text.VocabSize == 0 {
		c.Text.VocabSize = 300
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	return c
}

// storedCatalog is the metadata of a complete checkpoint for cfg under the
// given prefixes, without optional tensors: experts F8_E4M3 with F32 scales, the rest BF16.
func storedCatalog(cfg *Config, backbone, audio, root string, fused bool) []*Param {
	prefix := map[string]string{"backbone": backbone, "audio": audio, "root": root}
	var out []*Param
	for _, e := range ExpectedTensors(cfg, fused) {
		if e.Optional {
			continue
		}
		p := &Param{Name: prefix[e.Group] + e.Name, DType: checkpoint.BF16, Shape: e.Shape}
		out = append(out, p)
		if e.Expert && cfg.Quant.FP8() {
			p.DType = checkpoint.F8E4M3
			n := len(e.Shape)
			ss := append(append([]int(nil), e.Shape[:n-2]...), ceilDiv(e.Shape[n-2], 128), ceilDiv(e.Shape[n-1], 128))
			out = append(out, &Param{Name: prefix[e.Group] + e.Scale, DType: checkpoint.F32, Shape: ss})
		}
	}
	return out
}

func find(ps []*Param, name string) *Param {
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func without(ps []*Param, name string) []*Param {
	var out []*Param
	for _, p := range ps {
		if p.Name != name {
			out = append(out, p)
		}
	}
	return out
}

func TestBindPlacesHandWrittenNames(t *testing.T) {
	cfg := testConfig(t, TinyOddConfig())
	stored := storedCatalog(cfg, "model.language_model.", "", "", false)
	w, rep := Bind(cfg, stored, nil)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rep.Unplaced) != 0 {
		t.Errorf("unplaced: %v", rep.Unplaced)
	}
	if w.BackbonePrefix != "model.language_model." || w.AudioPrefix != "" {
		t.Errorf("prefixes %q %q", w.BackbonePrefix, w.AudioPrefix)
	}
	// Names and shapes written out by hand from MODEL.md for TinyOddConfig:
	// hidden 136, 3 heads/1 kv head of 24, linear 2 key heads of 20 and 6
	// value heads of 28, conv 4, 6 experts of 40, shared 56, tower 3/1 heads of 40, FFN 88.
	cases := []struct {
		p     *Param
		name  string
		shape []int
	}{
		{w.Embed, "model.language_model.embed_tokens.weight", []int{300, 136}},
		{w.LMHead, "lm_head.weight", []int{300, 136}},
		{w.Layers[0].Linear.InProjQKV, "model.language_model.layers.0.linear_attn.in_proj_qkv.weight", []int{2*2*20 + 6*28, 136}},
		{w.Layers[1].Linear.Conv1D, "model.language_model.layers.1.linear_attn.conv1d.weight", []int{248, 1, 4}},
		{w.Layers[2].Linear.ALog, "model.language_model.layers.2.linear_attn.A_log", []int{6}},
		{w.Layers[2].Linear.Norm, "model.language_model.layers.2.linear_attn.norm.weight", []int{28}},
		{w.Layers[2].Linear.OutProj, "model.language_model.layers.2.linear_attn.out_proj.weight", []int{136, 168}},
		{w.Layers[3].Full.QProj, "model.language_model.layers.3.self_attn.q_proj.weight", []int{144, 136}},
		{w.Layers[3].Full.KNorm, "model.language_model.layers.3.self_attn.k_norm.weight", []int{24}},
		{w.Layers[3].Full.OProj, "model.language_model.layers.3.self_attn.o_proj.weight", []int{136, 72}},
		{w.Layers[3].MoE.Router, "model.language_model.layers.3.mlp.gate.weight", []int{6, 136}},
		{w.Layers[3].MoE.Experts[5].Down, "model.language_model.layers.3.mlp.experts.5.down_proj.weight", []int{136, 40}},
		{w.Layers[3].MoE.Experts[5].Down.Scale, "model.language_model.layers.3.mlp.experts.5.down_proj.weight_scale_inv", []int{2, 1}},
		{w.Layers[0].MoE.SharedExpertGate, "model.language_model.layers.0.mlp.shared_expert_gate.weight", []int{1, 136}},
		{w.Tower.Embeddings[0], "codebook_embeddings.0.weight", []int{4096, 136}},
		{w.Tower.Embeddings[9], "codebook_embeddings.9.weight", []int{1024, 136}},
		{w.Tower.Shared[3].EHProj, "audio_decoder_mtp_shared.layers.3.eh_proj.weight", []int{136, 272}},
		{w.Tower.Shared[0].WQKV, "audio_decoder_mtp_shared.layers.0.attention.wqkv.weight", []int{200, 136}},
		{w.Tower.Residual[8].Head, "audio_decoder_mtp.layers.8.head.weight", []int{1024, 136}},
		{w.Tower.Residual[0].W2, "audio_decoder_mtp.layers.0.feed_forward.w2.weight", []int{136, 88}},
	}
	for _, c := range cases {
		if c.p == nil {
			t.Errorf("%s not bound", c.name)
			continue
		}
		if c.p.Name != c.name || !slices.Equal(c.p.Shape, c.shape) {
			t.Errorf("bound %s %v, want %s %v", c.p.Name, c.p.Shape, c.name, c.shape)
		}
	}
	if w.SemanticHead != nil || w.Tower.Shared[0].Head != nil {
		t.Error("optional / absent slots bound")
	}
	if len(w.Tower.Shared) != 4 || len(w.Tower.Residual) != 9 || len(w.Tower.Embeddings) != 10 {
		t.Errorf("tower %d+%d, codebooks %d", len(w.Tower.Shared), len(w.Tower.Residual), len(w.Tower.Embeddings))
	}
	if got, want := len(w.Params()), len(stored); got != want {
		t.Errorf("Params lists %d handles, %d stored", got, want)
	}
}

func TestBindFusedExpertsAndTiedHead(t *testing.T) {
	cfg := testConfig(t, TinyConfig())
	stored := storedCatalog(cfg, "model.", "model.", "", true)
	w, rep := Bind(cfg, stored, nil)
	if err := rep.Err(); err != nil {
		t.Fatal(err)
	}
	m := w.Layers[1].MoE
	if !m.Fused || m.Experts != nil {
		t.Fatal("fused layout not recognised")
	}
	if m.GateUp.Name != "model.layers.1.mlp.experts.gate_up_proj" || !slices.Equal(m.GateUp.Shape, []int{8, 320, 64}) ||
		m.GateUp.Scale.Name != "model.layers.1.mlp.experts.gate_up_proj_scale_inv" || !slices.Equal(m.GateUp.Scale.Shape, []int{8, 3, 1}) {
		t.Errorf("gate_up %s %v scale %s %v", m.GateUp.Name, m.GateUp.Shape, m.GateUp.Scale.Name, m.GateUp.Scale.Shape)
	}
	if !slices.Equal(m.Down.Shape, []int{8, 64, 160}) || !slices.Equal(m.Down.Scale.Shape, []int{8, 1, 2}) {
		t.Errorf("down %v scale %v", m.Down.Shape, m.Down.Scale.Shape)
	}
	if w.LMHead != w.Embed {
		t.Error("tied LM head is not the embedding")
	}
	if w.AudioPrefix != "model." {
		t.Errorf("audio prefix %q", w.AudioPrefix)
	}
}

func TestBindReportsProblems(t *testing.T) {
	cfg := testConfig(t, TinyConfig())
	base := func() []*Param { return storedCatalog(cfg, "model.", "", "", false) }
	cases := []struct {
		name     string
		mutate   func([]*Param) []*Param
		problem  string // substring of a problem ("" for none)
		missing  string
		unplaced string
	}{
		{"missing tensor", func(ps []*Param) []*Param { return without(ps, "model.layers.2.linear_attn.A_log") }, "", "model.layers.2.linear_attn.A_log", ""},
		{"missing scale", func(ps []*Param) []*Param {
			return without(ps, "model.layers.0.mlp.experts.3.up_proj.weight_scale_inv")
		}, "", "model.layers.0.mlp.experts.3.up_proj.weight_scale_inv", ""},
		{"unknown tensor", func(ps []*Param) []*Param {
			return append(ps, &Param{Name: "mtp.layers.0.fc.weight", DType: checkpoint.BF16, Shape: []int{2, 2}})
		}, "", "", "mtp.layers.0.fc.weight"},
		{"wrong shape", func(ps []*Param) []*Param {
			find(ps, "model.layers.3.self_attn.k_proj.weight").Shape = []int{256, 64}
			return ps
		}, "tensor model.layers.3.self_attn.k_proj.weight: shape [256, 64], want [512, 64] from text_config.num_key_value_heads, head_dim, hidden_size", "", ""},
		{"hidden contradicts", func(ps []*Param) []*Param {
			find(ps, "model.embed_tokens.weight").Shape = []int{300, 128}
			return ps
		}, "want [300, 64] from text_config.vocab_size, hidden_size", "", ""},
		{"wrong dtype", func(ps []*Param) []*Param {
			find(ps, "model.norm.weight").DType = checkpoint.I64
			return ps
		}, "tensor model.norm.weight: dtype I64", "", ""},
		{"bf16 expert under fp8 config", func(ps []*Param) []*Param {
			find(ps, "model.layers.1.mlp.experts.0.gate_proj.weight").DType = checkpoint.BF16
			return ps
		}, "quantization_config.quant_method is fp8", "", ""},
		{"scale shape", func(ps []*Param) []*Param {
			find(ps, "model.layers.1.mlp.experts.0.down_proj.weight_scale_inv").Shape = []int{1, 1}
			return ps
		}, "want [1, 2] for model.layers.1.mlp.experts.0.down_proj.weight", "", ""},
		{"layer type contradicts", func(ps []*Param) []*Param {
			var out []*Param
			for _, p := range ps {
				if !strings.HasPrefix(p.Name, "model.layers.3.self_attn.") {
					out = append(out, p)
				}
			}
			return append(out, &Param{Name: "model.layers.3.linear_attn.A_log", DType: checkpoint.BF16, Shape: []int{4}})
		}, "text_config.layer_types[3] = full_attention but the checkpoint has model.layers.3.linear_attn.*", "model.layers.3.self_attn.q_proj.weight", "model.layers.3.linear_attn.A_log"},
		{"ambiguous prefix", func(ps []*Param) []*Param {
			return append(ps, &Param{Name: "other.embed_tokens.weight", DType: checkpoint.BF16, Shape: []int{300, 64}})
		}, "tensor embed_tokens.weight found under several prefixes", "", ""},
		{"duplicate", func(ps []*Param) []*Param { return append(ps, ps[0]) }, "stored twice", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, rep := Bind(cfg, c.mutate(base()), nil)
			if c.problem != "" && !containsSub(rep.Problems, c.problem) {
				t.Errorf("problems %q lack %q", rep.Problems, c.problem)
			}
			if c.missing != "" && !containsSub(rep.Missing, c.missing) {
				t.Errorf("missing %q lacks %q", rep.Missing, c.missing)
			}
			if c.unplaced != "" && !containsSub(rep.Unplaced, c.unplaced) {
				t.Errorf("unplaced %q lacks %q", rep.Unplaced, c.unplaced)
			}
			failing := c.problem != "" || c.missing != ""
			if (rep.Err() != nil) != failing {
				t.Errorf("Err() = %v, want failure %v", rep.Err(), failing)
			}
		})
	}
}

func containsSub(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// The parameter count of the Qwen3.5-35B-A3B-shaped text config must be what
// HF transformers builds: 34.66 B (MODEL.md §2); the tower's is the closed
// form written out below.
func TestParameterCountFullShaped(t *testing.T) {
	cfg := fullShapedConfig(t)
	pc := CountParameters(cfg)
	if pc.Text < 34_655_000_000 || pc.Text >= 34_665_000_000 {
		t.Errorf("text parameters %d, want 34.66 B", pc.Text)
	}
	// Per tower layer: enorm, hnorm, eh_proj [D, 2D], attention norm,
	// wqkv [(16+2·2)·128, D], wo [D, 16·128], ffn norm, w1/w3/w2 (6144), out norm.
	const D = 2048
	layer := int64(D + D + 2*D*D + D + 20*128*D + D*16*128 + D + 3*6144*D + D)
	want := 13*layer + 9*1024*D + (4096+9*1024)*D
	if pc.Audio != want {
		t.Errorf("audio parameters %d, want %d", pc.Audio, want)
	}
}

func TestBindHeadsAndQuantContradictions(t *testing.T) {
	odd := testConfig(t, TinyOddConfig()) // untied
	stored := without(storedCatalog(odd, "model.", "", "", false), "lm_head.weight")
	if _, rep := Bind(odd, stored, nil); !containsSub(rep.Missing, "lm_head.weight") {
		t.Errorf("untied config without lm_head: missing %v", rep.Missing)
	}

	tied := testConfig(t, TinyConfig())
	stored = append(storedCatalog(tied, "model.", "", "", false), &Param{Name: "lm_head.weight", DType: checkpoint.BF16, Shape: []int{300, 64}})
	w, rep := Bind(tied, stored, nil)
	if rep.Err() != nil || w.LMHead != w.Embed || !containsSub(rep.Unplaced, "lm_head.weight") {
		t.Errorf("tied config with a stored lm_head: err %v, unplaced %v", rep.Err(), rep.Unplaced)
	}

	// FP8 experts in a checkpoint whose config has no quantization_config.
	plain := *tied
	plain.Quant = QuantConfig{}
	_, rep = Bind(&plain, storedCatalog(tied, "model.", "", "", false), nil)
	if !containsSub(rep.Problems, "dtype F8_E4M3 but config.json has no fp8 quantization_config") {
		t.Errorf("fp8 tensors without a quantization_config: %q", rep.Problems)
	}
	// Unquantised experts under an unquantised config bind, and no scale is expected.
	w, rep = Bind(&plain, storedCatalog(&plain, "model.", "", "", false), nil)
	if rep.Err() != nil || w.Layers[0].MoE.Experts[0].Gate.Scale != nil {
		t.Errorf("bf16 experts: %v", rep.Err())
	}
}

// Map gives every field of the tree its own mapped value, in both expert
// layouts: mapping handles to their names must give each field the name the
// table binds there; a tied LM head is the embedding's value, mapped once;
// an absent optional tensor is mapped from the zero handle.
func TestMapFollowsTheTable(t *testing.T) {
	for _, fused := range []bool{false, true} {
		cfg := testConfig(t, TinyConfig())
		cfg.Text.TieWordEmbeddings = true
		w, rep := Bind(cfg, storedCatalog(cfg, "model.", "model.", "", fused), nil)
		if err := rep.Err(); err != nil {
			t.Fatal(err)
		}
		calls := map[*Param]int{}
		names, err := Map(cfg, &w.Model, func(rel string, p *Param) (string, error) {
			calls[p]++
			if p == nil {
				return "absent:" + rel, nil
			}
			if !strings.HasSuffix(p.Name, rel) {
				t.Errorf("%s handed over under the name %s", p.Name, rel)
			}
			return p.Name, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for p, n := range calls {
			if n != 1 {
				t.Errorf("%v mapped %d times", p, n)
			}
		}
		if names.LMHead != "model.embed_tokens.weight" || names.SemanticHead != "absent:semantic_head.weight" {
			t.Errorf("LM head %q, semantic head %q", names.LMHead, names.SemanticHead)
		}
		if got := names.Tower.Residual[8].Head; got != "model.audio_decoder_mtp.layers.8.head.weight" {
			t.Errorf("tower residual 8 head %q", got)
		}
		if fused {
			if got := names.Layers[3].MoE.GateUp; got != "model.layers.3.mlp.experts.gate_up_proj" || !names.Layers[3].MoE.Fused {
				t.Errorf("fused gate_up %q", got)
			}
		} else if got := names.Layers[3].MoE.Experts[5].Down; got != "model.layers.3.mlp.experts.5.down_proj.weight" {
			t.Errorf("expert 5 down %q", got)
		}
		if got := names.Layers[0].Linear.InProjQKV; got != "model.layers.0.linear_attn.in_proj_qkv.weight" {
			t.Errorf("layer 0 in_proj_qkv %q", got)
		}
		// Sizes check against the same table: element counts from the names.
		size := func(n string) int {
			if p := find(storedCatalog(cfg, "model.", "model.", "", fused), n); p != nil {
				return int(p.NumElements())
			}
			return 0
		}
		if err := CheckBackbone(&cfg.Text, &names.Backbone, size); err != nil {
			t.Error(err)
		}
		names.Tower.Shared[1].W2 = "nothing"
		if err := CheckTower(&cfg.Audio, cfg.Text.HiddenSize, &names.Tower, size); err == nil || !strings.Contains(err.Error(), "audio_decoder_mtp_shared.layers.1.feed_forward.w2") ||
			!strings.Contains(err.Error(), "audio_decoder_config.dim, intermediate_size") {
			t.Errorf("wrong tower size: error %v", err)
		}
	}
	cfg := testConfig(t, TinyConfig())
	m := newModel[*Param](cfg, make([]bool, cfg.Text.NumLayers))
	m.Layers = m.Layers[1:]
	if _, err := Map(cfg, m, func(string, *Param) (int, error) { return 0, nil }); err == nil {
		t.Error("a tree of the wrong layer count mapped")
	}
}

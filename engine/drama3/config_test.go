package drama3

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// readFullShaped is testdata/drama3_full_shaped.json: the
// Qwen3.5-35B-A3B-shaped config.
func readFullShaped(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/drama3_full_shaped.json")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fullShapedConfig is readFullShaped parsed.
func fullShapedConfig(t testing.TB) *Config {
	t.Helper()
	c, err := ParseConfig(readFullShaped(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseFullShapedConfig(t *testing.T) {
	c, err := ParseConfig(readFullShaped(t))
	if err != nil {
		t.Fatal(err)
	}
	tc, a := c.Text, c.Audio
	if tc.HiddenSize != 2048 || tc.NumLayers != 40 || tc.HeadDim != 256 || tc.RotaryDim() != 64 ||
		tc.RopeTheta != 1e7 || tc.CountLayers(FullAttention) != 10 || tc.LinearConvDim() != 8192 {
		t.Errorf("text geometry %+v", tc)
	}
	if a.Layers() != 13 || a.ResidualLayers() != 9 || a.RotaryDim() != 64 || a.CodebookEntries(0) != 4096 || a.CodebookEntries(3) != 1024 {
		t.Errorf("audio geometry %+v", a)
	}
	if !c.Quant.FP8() || c.Quant.BlockRows != 128 || c.Quant.BlockCols != 128 {
		t.Errorf("quant %+v", c.Quant)
	}
}

// edit applies f to the decoded full-shaped config and re-encodes it.
func edit(t *testing.T, f func(root, text, audio map[string]any)) []byte {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal(readFullShaped(t), &root); err != nil {
		t.Fatal(err)
	}
	f(root, root["text_config"].(map[string]any), root["audio_decoder_config"].(map[string]any))
	data, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRopeSettingsEitherPlace(t *testing.T) {
	data := edit(t, func(_, text, _ map[string]any) {
		delete(text, "rope_parameters")
		text["rope_theta"] = 5e6
		text["partial_rotary_factor"] = 0.5
	})
	c, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	if c.Text.RopeTheta != 5e6 || c.Text.RotaryDim() != 128 {
		t.Errorf("top-level rope settings: theta %v rotary dim %d", c.Text.RopeTheta, c.Text.RotaryDim())
	}
	// Both places, same value: fine.
	data = edit(t, func(_, text, _ map[string]any) { text["rope_theta"] = 1e7 })
	if _, err := ParseConfig(data); err != nil {
		t.Errorf("agreeing duplicate: %v", err)
	}
}

func TestLayerTypesFromInterval(t *testing.T) {
	c, err := ParseConfig(edit(t, func(_, text, _ map[string]any) {
		delete(text, "layer_types")
		text["full_attention_interval"] = 4
	}))
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range c.Text.LayerTypes {
		if want := map[bool]LayerType{true: FullAttention, false: LinearAttention}[i%4 == 3]; k != want {
			t.Fatalf("layer %d: %s, want %s", i, k, want)
		}
	}
	if len(c.Text.LayerTypes) != 40 {
		t.Fatalf("%d layer types", len(c.Text.LayerTypes))
	}
	_, err = ParseConfig(edit(t, func(_, text, _ map[string]any) {
		delete(text, "layer_types")
		text["full_attention_interval"] = 0
	}))
	if err == nil || !strings.Contains(err.Error(), "text_config.full_attention_interval 0") {
		t.Fatalf("interval 0: %v", err)
	}
}

func TestBadConfigs(t *testing.T) {
	cases := []struct {
		name string
		f    func(root, text, audio map[string]any)
		want string // substring of the error: the key it must name
	}{
		{"wrong model type", func(r, _, _ map[string]any) { r["model_type"] = "qwen3" }, `model_type is "qwen3"`},
		{"no text config", func(r, _, _ map[string]any) { delete(r, "text_config") }, "text_config: missing"},
		{"missing hidden", func(_, tx, _ map[string]any) { delete(tx, "hidden_size") }, "text_config.hidden_size: missing"},
		{"string size", func(_, tx, _ map[string]any) { tx["head_dim"] = "256" }, "text_config.head_dim: want an integer"},
		{"fractional size", func(_, tx, _ map[string]any) { tx["num_experts"] = 2.5 }, "text_config.num_experts: want an integer"},
		{"zero heads", func(_, tx, _ map[string]any) { tx["num_key_value_heads"] = 0 }, "text_config.num_key_value_heads = 0"},
		{"heads not divisible", func(_, tx, _ map[string]any) { tx["num_key_value_heads"] = 3 }, "num_attention_heads 16 is not a multiple of num_key_value_heads 3"},
		{"linear heads not divisible", func(_, tx, _ map[string]any) { tx["linear_num_key_heads"] = 5 }, "linear_num_value_heads 32 is not a multiple of linear_num_key_heads 5"},
		{"layer types length", func(_, tx, _ map[string]any) { tx["num_hidden_layers"] = 41 }, "layer_types has 40 entries, num_hidden_layers is 41"},
		{"unknown layer type", func(_, tx, _ map[string]any) { tx["layer_types"].([]any)[7] = "sliding_attention" }, `layer_types[7]: unknown layer type "sliding_attention"`},
		{"top-k above experts", func(_, tx, _ map[string]any) { tx["num_experts_per_tok"] = 300 }, "num_experts_per_tok 300 exceeds num_experts 256"},
		{"rope contradiction", func(_, tx, _ map[string]any) { tx["partial_rotary_factor"] = 0.5 }, "rope_parameters.partial_rotary_factor = 0.25 contradicts text_config.partial_rotary_factor = 0.5"},
		{"rope missing", func(_, tx, _ map[string]any) { delete(tx, "rope_parameters") }, "rope_parameters.rope_theta: missing"},
		{"odd rotary dims", func(_, tx, _ map[string]any) {
			tx["rope_parameters"].(map[string]any)["partial_rotary_factor"] = 0.3
		}, "partial_rotary_factor = 0.3"},
		{"negative eps", func(_, tx, _ map[string]any) { tx["rms_norm_eps"] = -1 }, "text_config.rms_norm_eps = -1"},
		{"router not renormalised", func(_, tx, _ map[string]any) { tx["norm_topk_prob"] = false }, "text_config.norm_topk_prob is false"},
		{"no audio config", func(r, _, _ map[string]any) { delete(r, "audio_decoder_config") }, "audio_decoder_config: missing"},
		{"tower width", func(_, _, a map[string]any) { a["dim"] = 1024 }, "audio_decoder_config.dim 1024 differs from text_config.hidden_size 2048"},
		{"tower heads", func(_, _, a map[string]any) { a["n_local_heads"] = 3 }, "audio_decoder_config.n_head 16 is not a multiple of n_local_heads 3"},
		{"one codebook", func(_, _, a map[string]any) { a["num_codebooks"] = 1 }, "audio_decoder_config.num_codebooks = 1"},
		{"backbone codebooks", func(_, _, a map[string]any) { a["vq_backbone_codebooks"] = 2 }, "audio_decoder_config.vq_backbone_codebooks = 2"},
		{"tower rotary", func(_, _, a map[string]any) { a["rotary_percent"] = 1.5 }, "audio_decoder_config.rotary_percent = 1.5"},
		{"quant method", func(r, _, _ map[string]any) { r["quantization_config"].(map[string]any)["quant_method"] = "awq" }, `quant_method "awq"`},
		{"block size", func(r, _, _ map[string]any) {
			r["quantization_config"].(map[string]any)["weight_block_size"] = []any{128}
		}, "weight_block_size: want 2 values"},
		{"huge size", func(_, tx, _ map[string]any) { tx["vocab_size"] = 1e12 }, "text_config.vocab_size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseConfig(edit(t, c.f))
			if err == nil {
				t.Fatalf("accepted; want an error naming %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
	for _, junk := range []string{"", "null", "[1,2]", `{"model_type": 3}`, `{"model_type":"fish_omni","text_config":null}`} {
		if _, err := ParseConfig([]byte(junk)); err == nil {
			t.Errorf("ParseConfig(%q) accepted", junk)
		}
	}
}

func TestMarshalConfigRoundTrip(t *testing.T) {
	c := fullShapedConfig(t)
	data, err := MarshalConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(c)
	b, _ := json.Marshal(back)
	if string(a) != string(b) {
		t.Errorf("round trip changed the config:\n%s\n%s", a, b)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(readFullShaped(f))
	f.Add([]byte(`{"model_type":"fish_omni"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		// A config that validates must give a geometry the rest can use.
		if len(c.Text.LayerTypes) != c.Text.NumLayers || c.Audio.Dim != c.Text.HiddenSize {
			t.Fatalf("validated config is inconsistent: %+v", c)
		}
		_ = CountParameters(c)
		// and must survive writing (make-tiny's MarshalConfig) and reading back.
		out, err := MarshalConfig(c)
		if err != nil {
			t.Fatalf("a parsed config does not marshal: %v", err)
		}
		back, err := ParseConfig(out)
		if err != nil {
			t.Fatalf("the marshalled config does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(back, c) {
			t.Fatalf("round trip changed the config:\n got %+v\nwant %+v", back, c)
		}
	})
}

package drama3

// This file holds the geometries of the demo checkpoint that make-tiny writes
// (tiny.go): small, but with the real model's structure and ratios where they
// matter to the arithmetic.

// TinyConfig is the default make-tiny geometry: like the real model where
// the arithmetic differs by shape (head_dim 256 with partial rotary 0.25,
// linear heads of 128 with two value heads per key head, 3:1 linear/full
// layers, gated attention, block-FP8 experts whose matrices span two scale
// blocks with a ragged last one), and small elsewhere. VocabSize is 0: the
// writer sets it from the tokenizer.
func TinyConfig() *Config {
	return &Config{
		ModelType: ModelType,
		Text: TextConfig{
			HiddenSize: 64,
			NumLayers:  4,
			LayerTypes: []LayerType{LinearAttention, LinearAttention, LinearAttention, FullAttention},
			NumHeads:   4, NumKVHeads: 2, HeadDim: 256,
			RMSNormEps: 1e-6, RopeTheta: 1e7, PartialRotaryFactor: 0.25,
			NumExperts: 8, NumExpertsPerTok: 4, MoEIntermediate: 160, SharedIntermediate: 96,
			ConvKernel: 4, LinearKeyHeadDim: 128, LinearValueHeadDim: 128,
			LinearNumKeyHeads: 2, LinearNumValueHeads: 4,
			TieWordEmbeddings: true,
		},
		Audio: AudioConfig{
			Dim: 64, NumHeads: 4, NumKVHeads: 2, HeadDim: 32, IntermediateSize: 192,
			NormEps: 1e-6, NumCodebooks: 10, CodebookSize: 1024, SemanticCodebookSize: 4096,
			SharedLayers: 4, RopeBase: 1e7, RotaryPercent: 0.5, BackboneCodebooks: 1,
		},
		Quant: QuantConfig{Method: "fp8", BlockRows: 128, BlockCols: 128},
	}
}

// TinyOddConfig is a geometry with odd sizes everywhere (no power of two,
// hidden past one scale block, rotary half of a head of 24, expert width 40,
// top-3 of 6), for tests that must not pass by accident of aligned shapes.
func TinyOddConfig() *Config {
	c := TinyConfig()
	c.Text = TextConfig{
		HiddenSize: 136,
		NumLayers:  4,
		LayerTypes: []LayerType{LinearAttention, LinearAttention, LinearAttention, FullAttention},
		NumHeads:   3, NumKVHeads: 1, HeadDim: 24,
		RMSNormEps: 1e-6, RopeTheta: 1e6, PartialRotaryFactor: 0.5,
		NumExperts: 6, NumExpertsPerTok: 3, MoEIntermediate: 40, SharedIntermediate: 56,
		ConvKernel: 4, LinearKeyHeadDim: 20, LinearValueHeadDim: 28,
		LinearNumKeyHeads: 2, LinearNumValueHeads: 6,
		TieWordEmbeddings: false,
	}
	c.Audio.Dim = 136
	c.Audio.NumHeads, c.Audio.NumKVHeads, c.Audio.HeadDim = 3, 1, 40
	c.Audio.IntermediateSize = 88
	return c
}

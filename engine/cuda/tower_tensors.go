//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/cpu"
)

// This file names where the tower's and heads' weights live on the device:
// device pointers only, so the tower runs on whatever holds them (one arena
// block for the whole model, or a block per tensor in tests). The loader
// that places the checkpoint fills a TowerTensors.

// DevTensor is a tensor in device memory: Off bytes into Block.
type DevTensor struct {
	Block *Block
	Off   int64
}

func (t DevTensor) arg() Arg { return Arg(uint64(t.Block.Ptr) + uint64(t.Off)) }

func (t DevTensor) check(bytes int64, what string) error {
	if t.Block == nil {
		return fmt.Errorf("cuda: %s: not placed", what)
	}
	return checkFits(t.Block, t.Off, bytes, what)
}

// TowerLayerTensors is one tower layer (cpu.TowerLayerWeights): norms in
// float32, matrices in BF16, [out, in] row-major.
type TowerLayerTensors struct {
	ENorm, HNorm, AttentionNorm, FFNNorm, OutNorm DevTensor // float32 [Dim]
	EHProj                                        DevTensor // [Dim, 2·Dim]: input [enorm(e); hnorm(h)]
	WQKV                                          DevTensor // [(Heads+2·KVHeads)·HeadDim, Dim]: q, k, v rows
	WO                                            DevTensor // [Dim, Heads·HeadDim]
	W1, W3                                        DevTensor // gate, up [FFN, Dim]
	W2                                            DevTensor // down [Dim, FFN]
	Head                                          DevTensor // residual layers: [Entries[j], Dim]; unused in shared layers
}

// TowerTensors is the tower with what the frame's ends read: the semantic
// head, the codebook tables (tower embeddings and feedback) and the text
// embedding rows of the semantic tokens (feedback).
type TowerTensors struct {
	Geometry       cpu.TowerGeometry
	Codebooks      []DevTensor // BF16 [Entries[i], Dim]
	Shared         []TowerLayerTensors
	Residual       []TowerLayerTensors // Residual[j−1] embeds codebook j−1, its head gives codebook j
	SemanticHead   DevTensor           // BF16 [Entries[0]+1, Dim]: codes, then end of speech (GatherBF16Rows builds it from LM head rows)
	TextEmbed      DevTensor           // BF16 [TextVocab, Dim]: the backbone's embed_tokens
	TextVocab      int
	SemanticTokens []int // token id of <|semantic:c|>, c < Entries[0]
}

// Check verifies the geometry and that every tensor fits where it is said to be.
func (w *TowerTensors) Check() error {
	g := &w.Geometry
	if err := g.Validate(); err != nil {
		return err
	}
	ncb := len(g.Entries)
	switch {
	case ncb > FrameMaxCodebooks:
		return fmt.Errorf("cuda tower: %d codebooks, at most %d", ncb, FrameMaxCodebooks)
	case len(w.Codebooks) != ncb:
		return fmt.Errorf("cuda tower: %d codebook tables for %d codebooks", len(w.Codebooks), ncb)
	case len(w.Shared) != g.SharedLayers || len(w.Residual) != g.ResidualLayers():
		return fmt.Errorf("cuda tower: %d shared + %d residual layers, geometry needs %d + %d",
			len(w.Shared), len(w.Residual), g.SharedLayers, g.ResidualLayers())
	case len(w.SemanticTokens) != g.Entries[0]:
		return fmt.Errorf("cuda tower: %d semantic token ids for %d semantic codes", len(w.SemanticTokens), g.Entries[0])
	case g.HeadDim > 256 || g.HeadDim%4 != 0:
		return fmt.Errorf("cuda tower: head_dim %d, the attention kernel takes a multiple of 4 up to 256", g.HeadDim)
	}
	for c, id := range w.SemanticTokens {
		if id < 0 || id >= w.TextVocab {
			return fmt.Errorf("cuda tower: token id %d of <|semantic:%d|> outside the text vocabulary of %d", id, c, w.TextVocab)
		}
	}
	for _, n := range []int{g.Dim, 2 * g.Dim, g.FFN, g.Heads * g.HeadDim} {
		if n%8 != 0 {
			return fmt.Errorf("cuda tower: projection width %d is not a multiple of 8 (the BF16 GEMV's 16-byte loads)", n)
		}
	}
	D, hd := int64(g.Dim), int64(g.HeadDim)
	bf := func(rows, cols int64) int64 { return rows * cols * 2 }
	errs := []error{
		w.SemanticHead.check(bf(int64(g.Entries[0]+1), D), "semantic_head"),
		w.TextEmbed.check(bf(int64(w.TextVocab), D), "embed_tokens"),
	}
	for i, t := range w.Codebooks {
		errs = append(errs, t.check(bf(int64(g.Entries[i]), D), fmt.Sprintf("codebook_embeddings.%d", i)))
	}
	layer := func(p string, l *TowerLayerTensors, headRows int) {
		for _, n := range []struct {
			t    DevTensor
			name string
		}{{l.ENorm, "enorm"}, {l.HNorm, "hnorm"}, {l.AttentionNorm, "attention_norm"}, {l.FFNNorm, "ffn_norm"}, {l.OutNorm, "out_norm"}} {
			errs = append(errs, n.t.check(D*4, p+n.name))
		}
		errs = append(errs,
			l.EHProj.check(bf(D, 2*D), p+"eh_proj"),
			l.WQKV.check(bf(int64(g.Heads+2*g.KVHeads)*hd, D), p+"attention.wqkv"),
			l.WO.check(bf(D, int64(g.Heads)*hd), p+"attention.wo"),
			l.W1.check(bf(int64(g.FFN), D), p+"feed_forward.w1"),
			l.W3.check(bf(int64(g.FFN), D), p+"feed_forward.w3"),
			l.W2.check(bf(D, int64(g.FFN)), p+"feed_forward.w2"))
		if headRows > 0 {
			errs = append(errs, l.Head.check(bf(int64(headRows), D), p+"head"))
		}
	}
	for i := range w.Shared {
		layer(fmt.Sprintf("audio_decoder_mtp_shared.layers.%d.", i), &w.Shared[i], 0)
	}
	for i := range w.Residual {
		layer(fmt.Sprintf("audio_decoder_mtp.layers.%d.", i), &w.Residual[i], g.Entries[i+1])
	}
	return firstErr(errs...)
}

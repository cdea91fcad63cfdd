//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/cuda/kernel"
)

// This file names where the tower's and heads' weights live on the device:
// Tensors (a block and an offset) only, so the tower runs on whatever holds
// them (one arena block for the whole model, or a block per tensor in
// tests). The loader that places the checkpoint fills a TowerTensors.

// TowerLayerTensors is one tower layer (drama3.TowerLayer): norms in
// float32, matrices in BF16, [out, in] row-major.
type TowerLayerTensors struct {
	ENorm, HNorm, AttentionNorm, FFNNorm, OutNorm Tensor // float32 [Dim]
	EHProj                                        Tensor // [Dim, 2·Dim]: input [enorm(e); hnorm(h)]
	WQKV                                          Tensor // [(Heads+2·KVHeads)·HeadDim, Dim]: q, k, v rows
	WO                                            Tensor // [Dim, Heads·HeadDim]
	W1, W3                                        Tensor // gate, up [FFN, Dim]
	W2                                            Tensor // down [Dim, FFN]
	Head                                          Tensor // residual layers: [Entries[j], Dim]; unused in shared layers
}

// TowerTensors is the tower with what the frame's ends read: the semantic
// head, the codebook tables (tower embeddings and feedback) and the text
// embedding rows of the semantic tokens (feedback).
type TowerTensors struct {
	Geometry       TowerGeometry
	Codebooks      []Tensor // BF16 [Entries[i], Dim]
	Shared         []TowerLayerTensors
	Residual       []TowerLayerTensors // Residual[j−1] embeds codebook j−1, its head gives codebook j
	SemanticHead   Tensor              // BF16 [Entries[0]+1, Dim]: codes, then end of speech (GatherBF16Rows builds it from LM head rows)
	TextEmbed      Tensor              // BF16 [TextVocab, Dim]: the backbone's embed_tokens
	TextVocab      int
	SemanticTokens []int // token id of <|semantic:c|>, c < Entries[0]
}

// TowerMaxDim is the widest tower row (kernels/norms.cu: a row's norm runs
// in one block of 1024 threads, ROW_REGS values each).
const TowerMaxDim = kernel.RowRegs * 1024

// Check verifies the geometry and that every tensor fits where it is said to be.
func (w *TowerTensors) Check() error {
	g := &w.Geometry
	if err := g.Validate(); err != nil {
		return err
	}
	ncb := len(g.Entries)
	switch {
	case ncb > frameMaxCodebooks:
		return fmt.Errorf("cuda tower: %d codebooks, at most %d", ncb, frameMaxCodebooks)
	case len(w.Codebooks) != ncb:
		return fmt.Errorf("cuda tower: %d codebook tables for %d codebooks", len(w.Codebooks), ncb)
	case len(w.Shared) != g.SharedLayers || len(w.Residual) != g.ResidualLayers():
		return fmt.Errorf("cuda tower: %d shared + %d residual layers, geometry needs %d + %d",
			len(w.Shared), len(w.Residual), g.SharedLayers, g.ResidualLayers())
	case len(w.SemanticTokens) != g.Entries[0]:
		return fmt.Errorf("cuda tower: %d semantic token ids for %d semantic codes", len(w.SemanticTokens), g.Entries[0])
	case g.Dim > TowerMaxDim:
		return fmt.Errorf("cuda tower: dim %d, the tower's norm kernels hold a row of at most %d in one block's registers", g.Dim, TowerMaxDim)
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
		w.SemanticHead.fits(bf(int64(g.Entries[0]+1), D), "semantic_head"),
		w.TextEmbed.fits(bf(int64(w.TextVocab), D), "embed_tokens"),
	}
	for i, t := range w.Codebooks {
		errs = append(errs, t.fits(bf(int64(g.Entries[i]), D), fmt.Sprintf("codebook_embeddings.%d", i)))
	}
	layer := func(p string, l *TowerLayerTensors, headRows int) {
		for _, n := range []struct {
			t    Tensor
			name string
		}{{l.ENorm, "enorm"}, {l.HNorm, "hnorm"}, {l.AttentionNorm, "attention_norm"}, {l.FFNNorm, "ffn_norm"}, {l.OutNorm, "out_norm"}} {
			errs = append(errs, n.t.fits(D*4, p+n.name))
		}
		errs = append(errs,
			l.EHProj.fits(bf(D, 2*D), p+"eh_proj"),
			l.WQKV.fits(bf(int64(g.Heads+2*g.KVHeads)*hd, D), p+"attention.wqkv"),
			l.WO.fits(bf(D, int64(g.Heads)*hd), p+"attention.wo"),
			l.W1.fits(bf(int64(g.FFN), D), p+"feed_forward.w1"),
			l.W3.fits(bf(int64(g.FFN), D), p+"feed_forward.w3"),
			l.W2.fits(bf(D, int64(g.FFN)), p+"feed_forward.w2"))
		if headRows > 0 {
			errs = append(errs, l.Head.fits(bf(int64(headRows), D), p+"head"))
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

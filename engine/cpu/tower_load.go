package cpu

import (
	"fmt"

	"proscenium/engine/drama3"
)

// This file binds the tower's float32 weights from a checkpoint's Weights
// tree (engine/drama3 owns the tensor names).

// TowerGeometryOf converts audio_decoder_config into the tower's geometry.
func TowerGeometryOf(a *drama3.AudioConfig) (TowerGeometry, error) {
	g := TowerGeometry{
		Dim: a.Dim, Heads: a.NumHeads, KVHeads: a.NumKVHeads, HeadDim: a.HeadDim, FFN: a.IntermediateSize,
		Eps: float32(a.NormEps), RotaryDim: a.RotaryDim(), RopeTheta: a.RopeBase, SharedLayers: a.SharedLayers,
	}
	for i := 0; i < a.NumCodebooks; i++ {
		g.Entries = append(g.Entries, a.CodebookEntries(i))
	}
	return g, g.Validate()
}

// LoadTowerWeights reads the tower and the codebook embeddings into float32.
func LoadTowerWeights(w *drama3.Weights) (*TowerWeights, error) {
	g, err := TowerGeometryOf(&w.Config.Audio)
	if err != nil {
		return nil, err
	}
	r := &paramReader{w: w, part: "tower weights"}
	read := r.read
	tw := &TowerWeights{Geometry: g}
	if len(w.CodebookEmbeddings) != len(g.Entries) || len(w.TowerShared) != g.SharedLayers || len(w.TowerResid) != g.ResidualLayers() {
		return nil, fmt.Errorf("tower weights: bound %d codebook embeddings, %d shared and %d residual layers; config needs %d, %d, %d",
			len(w.CodebookEmbeddings), len(w.TowerShared), len(w.TowerResid), len(g.Entries), g.SharedLayers, g.ResidualLayers())
	}
	for i, p := range w.CodebookEmbeddings {
		tw.Embeddings = append(tw.Embeddings, read(p, fmt.Sprintf("codebook_embeddings.%d", i)))
	}
	layer := func(L *drama3.TowerLayer, p string, head bool) TowerLayerWeights {
		l := TowerLayerWeights{
			ENorm: read(L.ENorm, p+"enorm"), HNorm: read(L.HNorm, p+"hnorm"), EHProj: read(L.EHProj, p+"eh_proj"),
			AttentionNorm: read(L.AttentionNorm, p+"attention_norm"),
			WQKV:          read(L.WQKV, p+"attention.wqkv"), WO: read(L.WO, p+"attention.wo"),
			FFNNorm: read(L.FFNNorm, p+"ffn_norm"),
			W1:      read(L.W1, p+"feed_forward.w1"), W3: read(L.W3, p+"feed_forward.w3"), W2: read(L.W2, p+"feed_forward.w2"),
			OutNorm: read(L.OutNorm, p+"out_norm"),
		}
		if head {
			l.Head = read(L.Head, p+"head")
		}
		return l
	}
	for i := range w.TowerShared {
		tw.Shared = append(tw.Shared, layer(&w.TowerShared[i], fmt.Sprintf("audio_decoder_mtp_shared.layers.%d.", i), false))
	}
	for i := range w.TowerResid {
		tw.Residual = append(tw.Residual, layer(&w.TowerResid[i], fmt.Sprintf("audio_decoder_mtp.layers.%d.", i), true))
	}
	if r.err != nil {
		return nil, r.err
	}
	if err := tw.Check(); err != nil {
		return nil, err
	}
	return tw, nil
}

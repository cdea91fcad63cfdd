package cuda

import (
	"fmt"

	"proscenium/engine/drama3"
)

// TowerGeometry is the device tower's dimensions, read from
// audio_decoder_config (drama3.AudioConfig) by TowerGeometryOf, as the
// mixers' DeltaNetGeometry and AttentionGeometry are from text_config.
type TowerGeometry struct {
	Dim            int
	Heads, KVHeads int // n_head, n_local_heads
	HeadDim        int
	FFN            int     // intermediate_size
	Eps            float32 // norm_eps: every tower norm
	RotaryDim      int     // head_dim·rotary_percent: interleaved-pair RoPE on these leading dims
	RopeTheta      float64 // rope_base
	SharedLayers   int
	Entries        []int // entries of each codebook, codebook 0 first; residual layers = len−1
}

// TowerGeometryOf reads the tower's dimensions from a.
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

// ResidualLayers is the number of residual layers (one per residual codebook).
func (g *TowerGeometry) ResidualLayers() int { return len(g.Entries) - 1 }

// Validate checks sizes and divisibility.
func (g *TowerGeometry) Validate() error {
	for _, p := range []struct {
		name string
		v    int
	}{{"dim", g.Dim}, {"n_head", g.Heads}, {"n_local_heads", g.KVHeads}, {"head_dim", g.HeadDim},
		{"intermediate_size", g.FFN}, {"shared_enrichment_layers", g.SharedLayers}} {
		if p.v <= 0 {
			return fmt.Errorf("tower geometry: %s = %d, want > 0", p.name, p.v)
		}
	}
	if len(g.Entries) < 2 {
		return fmt.Errorf("tower geometry: %d codebooks, need at least 2", len(g.Entries))
	}
	for i, n := range g.Entries {
		if n <= 0 {
			return fmt.Errorf("tower geometry: codebook %d has %d entries", i, n)
		}
	}
	if g.Heads%g.KVHeads != 0 {
		return fmt.Errorf("tower geometry: n_head %d is not a multiple of n_local_heads %d", g.Heads, g.KVHeads)
	}
	if g.RotaryDim < 0 || g.RotaryDim > g.HeadDim || g.RotaryDim%2 != 0 {
		return fmt.Errorf("tower geometry: rotary dims %d must be even and within head_dim %d", g.RotaryDim, g.HeadDim)
	}
	if g.RotaryDim > 0 && !(g.RopeTheta > 0) {
		return fmt.Errorf("tower geometry: rope_base = %g, want > 0", g.RopeTheta)
	}
	if !(g.Eps > 0) {
		return fmt.Errorf("tower geometry: norm_eps = %g, want > 0", g.Eps)
	}
	return nil
}

//go:build cuda

package cuda

import (
	"fmt"
	"slices"
)

// What the worker's tower benchmark (cmd/proscenium-gpu bench-tower) sets
// and reads on a Tower beside a take's API: the GEMV instance and the launch
// sequence a frame is captured with, its KV cache, its logits, its
// projections alone.

// SetRowsGemv makes the B-row GEMVs of the frames captured after it
// (FrameRows) run instance v (a GemvRowsVariants entry) wherever it has the
// one-row choice's threads per row (nil: the one-row choice):
// PROSCENIUM_GPU_TOWER_GEMVX's knob, for the benchmark.
func (t *Tower) SetRowsGemv(v *GemvVariant) error {
	if v != nil && !slices.Contains(GemvRowsVariants, *v) {
		return fmt.Errorf("cuda tower: no B-row GEMV instance %s", v.Name())
	}
	t.rowsGemv = v
	return nil
}

// ParseGemvRowsVariant is the GemvRowsVariants entry named name ("": nil).
func ParseGemvRowsVariant(name string) (*GemvVariant, error) {
	if name == "" {
		return nil, nil
	}
	for i := range GemvRowsVariants {
		if GemvRowsVariants[i].Name() == name {
			return &GemvRowsVariants[i], nil
		}
	}
	return nil, fmt.Errorf("no B-row GEMV instance %q (%v)", name, GemvRowsVariants)
}

// SetGemv puts every projection of the frames captured after it on GEMV
// instance v (nil: each projection's ChooseGemv choice).
func (t *Tower) SetGemv(v *GemvVariant) { t.gemv = v }

// Fusion names the launch sequence of a frame (PROSCENIUM_GPU_TOWER's
// values: "plain", "gateup").
func (t *Tower) Fusion() string { return t.fuse.String() }

// SetFusion makes frames captured after it take sequence name ("" the
// default; TowerFusions lists them).
func (t *Tower) SetFusion(name string) error {
	f, err := parseTowerFusion(name)
	if err != nil {
		return err
	}
	t.fuse = f
	return nil
}

// TowerFusions names every launch sequence a frame may take.
func TowerFusions() []string {
	var names []string
	for _, f := range towerFusionVariants {
		names = append(names, f.String())
	}
	return names
}

// KV is the tower's KV cache block (every layer's keys then values).
func (t *Tower) KV() *Block { return t.kv }

// Logits is codebook j's logits block of the last frame (j = 0: the
// semantic head's, Entries[0]+1 values; else Entries[j]).
func (t *Tower) Logits(j int) *Block {
	if j == 0 {
		return t.semantic
	}
	return t.residual[j-1]
}

// Projections enqueues the GEMVs of one frame and nothing else: the
// semantic head, every layer's projections (gate and up as Frame runs them,
// with their SwiGLU) and the residual heads, over whatever the scratch holds
// (the benchmark's share of the weights' reads).
func (t *Tower) Projections(q *Queue, hidden *Block) error {
	g := &t.g
	D, hd := g.Dim, g.HeadDim
	if err := t.project(q, t.w.SemanticHead, g.Entries[0]+1, D, 1, hidden, t.semantic); err != nil {
		return err
	}
	for li := 0; li < t.layers(); li++ {
		lw := t.layerTensors(li)
		if err := firstErr(
			t.project(q, lw.EHProj, D, 2*D, 1, t.cat, t.x),
			t.project(q, lw.WQKV, (g.Heads+2*g.KVHeads)*hd, D, 1, t.normed, t.qkv),
			t.project(q, lw.WO, D, g.Heads*hd, 1, t.attn, t.mixed),
			t.gateUp(q, t.frameFusion(1), lw, 1),
			t.project(q, lw.W2, D, g.FFN, 1, t.gate, t.mixed)); err != nil {
			return err
		}
		if li >= g.SharedLayers {
			j := li - g.SharedLayers + 1
			if err := t.project(q, lw.Head, g.Entries[j], D, 1, t.h, t.residual[j-1]); err != nil {
				return err
			}
		}
	}
	return nil
}

//go:build cuda

package cuda

import "fmt"

// This file gives each live take of a drama3.Interleave its own device
// state over one model's weights: until the kernels take B rows, a step runs
// each live take's frame graph in turn (docs/PERF.md "Several takes at
// once"), and a take's codes are those it makes alone.

// NewTake is another Frames for a take beside f's: the same weight arena
// and codec, its own backbone state (KV caches, DeltaNet and conv states,
// work buffers), tower (caches, sampler counters), frame graphs, result
// block and codec stream; f's voice prefix cache is shared (f closes it). LoadFrames admitted its memory when
// FramesOptions.Takes counts it. Closing it frees only its own; f must be
// closed after every take made from it.
func (f *Frames) NewTake() (*Frames, error) {
	if f.closed {
		return nil, fmt.Errorf("cuda frames: closed")
	}
	bb, err := NewBackbone(f.d, f.bb.W, f.bb.Plan)
	if err != nil {
		return nil, fmt.Errorf("cuda frames: a take's backbone state: %w", err)
	}
	bb.borrowed = true
	bb.Experts, bb.ExpertGroup, bb.Fused = f.bb.Experts, f.bb.ExpertGroup, f.bb.Fused // the first take's step
	n := &Frames{d: f.d, bb: bb, codec: f.codec, opt: f.opt, semantic: f.semantic, endToken: f.endToken, borrowed: true,
		prefixes: f.prefixes} // the model's voice cache: a voice one take kept, another restores
	if err := n.build(); err != nil {
		return nil, fmt.Errorf("cuda frames: a take's state: %w", err)
	}
	return n, nil
}

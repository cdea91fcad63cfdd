package cpu

import (
	"fmt"

	"proscenium/engine/drama3"
)

// This file is the CPU implementation of drama3.Backend: it composes the
// backbone, the codebook tower, the semantic head and feedback row, and the
// codec into the steps the generation loop drives. Every row the backbone
// appends also goes through the tower: prompt rows but the last as text rows
// in Begin, each audio row layer by layer as its codes are sampled.

// FrameDecoder turns codes into PCM: frames[i] holds frame i's codes
// (codebook 0 first); Decode returns the samples of frames [from, to),
// exactly those of a whole decode.
type FrameDecoder interface {
	Decode(frames [][]int, from, to int) ([]float32, error)
}

// Backend runs takes on the CPU. It is not safe for concurrent use.
type Backend struct {
	backbone *Backbone
	tower    *Tower
	heads    *AudioHeads
	codec    FrameDecoder
	entries  []int
	hidden   []float32 // final-norm hidden state of the last backbone row
	row      []float32 // feedback row scratch
	audioRow bool      // the tower is running an audio row (for Probe)

	// Probe, when set, sees intermediate tensors for stage comparisons, in
	// order: "prefill_hidden" [prompt rows, D] once per take; per frame
	// "tower_layer.L" [D] for L = 0..12 (shared first); per feedback step
	// "feedback_row" [D] and "backbone_hidden" [D]. It must not keep values.
	Probe func(name string, values []float32)
}

var _ drama3.Backend = (*Backend)(nil)

// NewBackend checks that the parts agree on their sizes.
func NewBackend(bb *Backbone, tw *Tower, heads *AudioHeads, codec FrameDecoder) (*Backend, error) {
	bg, tg := bb.Geometry(), tw.Geometry()
	if bg.Hidden != tg.Dim || heads.Dim != bg.Hidden {
		return nil, fmt.Errorf("cpu backend: backbone hidden %d, tower dim %d, heads dim %d must agree", bg.Hidden, tg.Dim, heads.Dim)
	}
	if len(heads.Codebooks) != len(tg.Entries) || heads.Codes() != tg.Entries[0] {
		return nil, fmt.Errorf("cpu backend: heads have %d codebooks and %d semantic codes, tower %d codebooks of %v",
			len(heads.Codebooks), heads.Codes(), len(tg.Entries), tg.Entries)
	}
	if len(heads.TextEmbed) != bg.Vocab*bg.Hidden {
		return nil, fmt.Errorf("cpu backend: heads' text embedding has %d values, backbone vocabulary %d × %d", len(heads.TextEmbed), bg.Vocab, bg.Hidden)
	}
	b := &Backend{backbone: bb, tower: tw, heads: heads, codec: codec, entries: tg.Entries}
	b.row = make([]float32, bg.Hidden)
	b.tower.LayerOutput = func(layer int, h []float32) {
		if b.Probe != nil && b.audioRow {
			b.Probe(fmt.Sprintf("tower_layer.%d", layer), h)
		}
	}
	return b, nil
}

// CodebookEntries is the number of entries of each codebook.
func (b *Backend) CodebookEntries() []int { return b.entries }

// Begin clears every cache, runs the prompt through the backbone and all
// but its last row through the tower (text rows), and writes the semantic
// logits of the last row.
func (b *Backend) Begin(prompt []int, semantic []float32) error {
	if len(prompt) == 0 {
		return fmt.Errorf("cpu backend: empty prompt")
	}
	if len(semantic) != b.heads.Codes()+1 {
		return fmt.Errorf("cpu backend: %d semantic logits, want %d", len(semantic), b.heads.Codes()+1)
	}
	b.backbone.Reset()
	b.tower.Reset()
	D := b.backbone.Geometry().Hidden
	hidden, err := b.backbone.Run(TokenRows(prompt))
	if err != nil {
		return err
	}
	if b.Probe != nil {
		b.Probe("prefill_hidden", hidden)
	}
	n := len(prompt) - 1
	if err := b.tower.Text(hidden[:n*D], n); err != nil {
		return err
	}
	b.hidden = append(b.hidden[:0], hidden[n*D:]...)
	b.heads.SemanticLogits(semantic, b.hidden)
	return nil
}

// TowerShared runs the shared tower layers over the last backbone row.
func (b *Backend) TowerShared(code0 int) error {
	b.audioRow = true
	defer func() { b.audioRow = false }()
	return b.tower.Shared(b.hidden, code0)
}

// TowerResidual runs residual layer j with codebook j−1 = prev and writes
// codebook j's logits.
func (b *Backend) TowerResidual(j, prev int, logits []float32) error {
	b.audioRow = true
	defer func() { b.audioRow = false }()
	return b.tower.Residual(j, prev, logits)
}

// Advance appends the frame's feedback row to the backbone and writes the
// new row's semantic logits.
func (b *Backend) Advance(codes []int, semantic []float32) error {
	if err := b.heads.FeedbackRow(b.row, codes); err != nil {
		return err
	}
	if b.Probe != nil {
		b.Probe("feedback_row", b.row)
	}
	hidden, err := b.backbone.Run([]BackboneRow{{Embedding: b.row}})
	if err != nil {
		return err
	}
	if b.Probe != nil {
		b.Probe("backbone_hidden", hidden)
	}
	b.hidden = append(b.hidden[:0], hidden...)
	b.heads.SemanticLogits(semantic, b.hidden)
	return nil
}

// Decode decodes frames [from, to) through the codec.
func (b *Backend) Decode(frames [][]int, from, to int) ([]float32, error) {
	if b.codec == nil {
		return nil, fmt.Errorf("cpu backend: no codec loaded")
	}
	return b.codec.Decode(frames, from, to)
}

package cpu

import (
	"context"
	"fmt"

	"proscenium/engine/drama3"
)

// This file is the CPU's drama3.Stepper: it composes the backbone, the
// codebook tower, the semantic head and feedback row, and the codec into the
// fine-grained steps of a frame; drama3.StepFrames makes them the CPU's
// FrameBackend with the host sampler. Every row the backbone appends also
// goes through the tower: prompt rows but the last as text rows in Begin,
// each audio row layer by layer as its codes are drawn.

// FrameDecoder turns codes into PCM: frames[i] holds frame i's codes
// (codebook 0 first); Decode returns the samples of frames [from, to),
// exactly those of a whole decode.
type FrameDecoder interface {
	Decode(frames [][]int, from, to int) ([]float32, error)
}

// Backend runs takes on the CPU. It is not safe for concurrent use.
type Backend struct {
	backbone  *Backbone
	tower     *Tower
	heads     *drama3.Heads
	textEmbed []float32   // the backbone's embed_tokens [vocab, D]
	codebooks [][]float32 // the tower's codebook embeddings
	codec     FrameDecoder
	entries   []int
	hidden    []float32 // final-norm hidden state of the last backbone row
	row       []float32 // feedback row scratch
	audioRow  bool      // the tower is running an audio row (for Probe)

	prefixes   *drama3.PrefixCache // voice prefixes (prefix_snapshot.go); nil: none
	lastPrefix drama3.PrefixOutcome

	// Probe, when set, sees intermediate tensors for stage comparisons, in
	// order: "prefill_hidden" [D] for each prompt row; per frame
	// "tower_layer.L" [D] for L = 0..12 (shared first); per feedback step
	// "feedback_row" [D] and "backbone_hidden" [D]. It must not keep values.
	Probe func(name string, values []float32)
}

var _ drama3.Stepper = (*Backend)(nil)

// NewBackend checks that the parts agree on their sizes.
func NewBackend(bb *Backbone, tw *Tower, heads *drama3.Heads, codec FrameDecoder) (*Backend, error) {
	bg, tg := bb.Config(), tw.Config()
	if bg.HiddenSize != tg.Dim || heads.Dim != bg.HiddenSize {
		return nil, fmt.Errorf("cpu backend: backbone hidden %d, tower dim %d, heads dim %d must agree", bg.HiddenSize, tg.Dim, heads.Dim)
	}
	if heads.Codes() != tw.Entries()[0] || len(heads.Semantic) != (heads.Codes()+1)*heads.Dim {
		return nil, fmt.Errorf("cpu backend: semantic head of %d values for %d semantic codes, the tower's codebook 0 has %d",
			len(heads.Semantic), heads.Codes(), tw.Entries()[0])
	}
	for _, id := range heads.SemanticTokens {
		if id < 0 || id >= bg.VocabSize {
			return nil, fmt.Errorf("cpu backend: semantic token id %d outside the vocabulary [0, %d)", id, bg.VocabSize)
		}
	}
	b := &Backend{backbone: bb, tower: tw, heads: heads, codec: codec, entries: tw.Entries(),
		textEmbed: bb.w.Embed, codebooks: tw.w.Embeddings}
	b.row = make([]float32, bg.HiddenSize)
	b.tower.LayerOutput = func(layer int, h []float32) {
		if b.Probe != nil && b.audioRow {
			b.Probe(fmt.Sprintf("tower_layer.%d", layer), h)
		}
	}
	return b, nil
}

// SamplesPerFrame is the codec's samples per frame (0 when the decoder does
// not say, as with test decoders).
func (b *Backend) SamplesPerFrame() int {
	if s, ok := b.codec.(interface{ SamplesPerFrame() int }); ok {
		return s.SamplesPerFrame()
	}
	return 0
}

// CodebookEntries is the number of entries of each codebook.
func (b *Backend) CodebookEntries() []int { return b.entries }

// LoadBackend builds the CPU backend from a checkpoint opened by
// drama3.LoadEngine: its bound weights read as float32, its tokenizer
// resolving the semantic and end-of-speech tokens, its codec's decoder.
// progress, when not nil, sees the stored bytes read of the total.
func LoadBackend(ck *drama3.Checkpoint, progress func(done, total int64)) (*Backend, error) {
	return loadBackend(ck, progress, nil)
}

// LoadBackendRounded is LoadBackend with the backbone's, the tower's and the
// embeddings' weights Rounded by seed: the reference's own float32 rounding
// spread, the baseline of a comparison with another backend.
func LoadBackendRounded(ck *drama3.Checkpoint, seed uint64) (*Backend, error) {
	return loadBackend(ck, nil, func(m *drama3.Model[[]float32]) *drama3.Model[[]float32] { return Rounded(m, seed) })
}

func loadBackend(ck *drama3.Checkpoint, progress func(done, total int64), edit func(*drama3.Model[[]float32]) *drama3.Model[[]float32]) (*Backend, error) {
	if ck.Tokenizer == nil || ck.Codec == nil {
		return nil, fmt.Errorf("cpu backend: %s was opened without its tokenizer and codec (drama3.LoadEngine)", ck.Dir)
	}
	cfg, w := ck.Config, ck.Weights
	m, err := loadModel(w, progress)
	if err != nil {
		return nil, err
	}
	if edit != nil {
		m = edit(m)
	}
	heads, err := drama3.NewHeads(w, ck.Tokenizer, m.Embed)
	if err != nil {
		return nil, err
	}
	codec, err := NewCodec(ck.Codec)
	if err != nil {
		return nil, err
	}
	bb, err := NewBackbone(&cfg.Text, &m.Backbone)
	if err != nil {
		return nil, err
	}
	tower, err := NewTower(&cfg.Audio, &m.Tower)
	if err != nil {
		return nil, err
	}
	cd, err := NewCodecFrames(codec, tower.Entries())
	if err != nil {
		return nil, err
	}
	b, err := NewBackend(bb, tower, heads, cd)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// CodecFrames adapts the codec to the loop's frames: it keeps the take's
// codes frame-major as the codec reads them, appending frames as they come.
// Chunks asked for in order (each from where the last ended, as the loop
// does) go through a CodecStream, which keeps each stage's history, so a
// chunk costs only its own frames; any other range takes the stateless
// decode, which recomputes its receptive field. Both give exactly the whole
// decode's samples.
type CodecFrames struct {
	codec   *Codec
	stream  *CodecStream // this take's in-order decode; nil until its first chunk
	scratch CodecScratch // for out-of-order ranges
	flat    []int32
	width   int
}

// NewCodecFrames checks that the codec decodes the codebooks the model
// samples (count and sizes) and wraps it.
func NewCodecFrames(c *Codec, entries []int) (*CodecFrames, error) {
	g := c.Geometry()
	if g.Codebooks() != len(entries) {
		return nil, fmt.Errorf("codec.pth decodes %d codebooks, the model samples %d", g.Codebooks(), len(entries))
	}
	if g.SemanticCodes != entries[0] {
		return nil, fmt.Errorf("codec.pth semantic codebook has %d entries, the model's %d", g.SemanticCodes, entries[0])
	}
	for i, n := range entries[1:] {
		if n != g.ResidualCodes {
			return nil, fmt.Errorf("codec.pth residual codebooks have %d entries, the model's codebook %d has %d", g.ResidualCodes, i+1, n)
		}
	}
	return &CodecFrames{codec: c, width: len(entries)}, nil
}

// SamplesPerFrame is the codec's hop.
func (d *CodecFrames) SamplesPerFrame() int { return d.codec.Geometry().SamplesPerFrame }

// Decode returns frames [from, to) of frames' whole decode.
func (d *CodecFrames) Decode(frames [][]int, from, to int) ([]float32, error) {
	if len(d.flat) > len(frames)*d.width {
		d.Reset() // a new take
	}
	for _, f := range frames[len(d.flat)/d.width:] {
		if len(f) != d.width {
			return nil, fmt.Errorf("codec: frame of %d codes, want %d", len(f), d.width)
		}
		for _, c := range f {
			d.flat = append(d.flat, int32(c))
		}
	}
	if d.stream == nil {
		d.stream = d.codec.NewStream()
	}
	if from == d.stream.Frames() && from < to && to*d.width <= len(d.flat) {
		return d.stream.Push(d.flat[from*d.width : to*d.width])
	}
	return d.codec.Decode(d.flat, from, to, &d.scratch)
}

// Reset forgets the codes and the stream of the last take.
func (d *CodecFrames) Reset() {
	d.flat = d.flat[:0]
	d.stream = nil
}

// PrefillChunk is the number of prompt rows the backbone and the tower run
// between checks of the take's context: a multiple of the DeltaNet chunk, so
// the chunked prefill computes exactly what one whole prefill does.
const PrefillChunk = 2 * deltaNetChunk

// prefillChunks splits n prompt rows into [from, to) ranges of PrefillChunk
// rows; a last range of one row joins the one before (a one-row backbone
// run would take the recurrence instead of the chunked form).
func prefillChunks(n int) [][2]int {
	var out [][2]int
	for from := 0; from < n; from += PrefillChunk {
		out = append(out, [2]int{from, min(from+PrefillChunk, n)})
	}
	if k := len(out); k > 1 && out[k-1][1]-out[k-1][0] == 1 {
		out[k-2][1] = n
		out = out[:k-1]
	}
	return out
}

// Begin clears every cache, runs the prompt through the backbone and all
// but its last row through the tower (text rows) in chunks of PrefillChunk
// rows, checking ctx before each, and writes the semantic logits of the
// last row.
func (b *Backend) Begin(ctx context.Context, prompt []int, semantic []float32) error {
	if len(prompt) == 0 {
		return fmt.Errorf("cpu backend: empty prompt")
	}
	if len(semantic) != b.heads.Codes()+1 {
		return fmt.Errorf("cpu backend: %d semantic logits, want %d", len(semantic), b.heads.Codes()+1)
	}
	b.backbone.Reset()
	b.tower.Reset()
	if r, ok := b.codec.(interface{ Reset() }); ok {
		r.Reset()
	}
	b.lastPrefix = drama3.PrefixOutcome{Prefilled: len(prompt)}
	D := b.backbone.Config().HiddenSize
	last := len(prompt) - 1 // the row whose hidden state starts frame 0
	for _, c := range prefillChunks(len(prompt)) {
		if err := ctx.Err(); err != nil {
			return err
		}
		hidden, err := b.backbone.Run(TokenRows(prompt[c[0]:c[1]]))
		if err != nil {
			return err
		}
		if b.Probe != nil {
			for r := range c[1] - c[0] {
				b.Probe("prefill_hidden", hidden[r*D:(r+1)*D])
			}
		}
		text := min(c[1], last) - c[0] // rows of this chunk the tower takes
		if err := b.tower.Text(hidden[:text*D], text); err != nil {
			return err
		}
		if c[1] == len(prompt) {
			b.hidden = append(b.hidden[:0], hidden[text*D:]...)
		}
	}
	b.semanticLogits(semantic)
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
	if err := b.heads.FeedbackRow(b.row, codes, b.textEmbed, b.codebooks); err != nil {
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
	b.semanticLogits(semantic)
	return nil
}

// Decode decodes frames [from, to) through the codec.
func (b *Backend) Decode(frames [][]int, from, to int) ([]float32, error) {
	if b.codec == nil {
		return nil, fmt.Errorf("cpu backend: no codec loaded")
	}
	return b.codec.Decode(frames, from, to)
}

// semanticLogits writes the semantic head's logits of the last backbone row.
func (b *Backend) semanticLogits(dst []float32) {
	MatVec(dst, b.heads.Semantic, b.hidden, b.heads.Codes()+1, b.heads.Dim)
}

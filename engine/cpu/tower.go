package cpu

import (
	"fmt"

	"proscenium/engine/drama3"
)

// This file is the codebook tower (MODEL.md §3): 4 shared + 9 residual
// layers, each
//
//	h_out = out_norm(Block(eh_proj([enorm(mask·E[code]); hnorm(h_in)])))
//
// with Block a pre-norm attention + SwiGLU block with residuals. Every layer
// keeps a KV cache over every row the backbone appends: text rows run with
// code mask 0, audio rows embed a code. Working definitions (docs/MODEL.md,
// "Tower, semantic head, feedback, sampler"): h_in of shared layer 0 is the
// backbone row's final-norm hidden state, each later layer takes the previous
// h_out; the shared layers embed codebook 0, residual layer j (1-based)
// embeds codebook j−1 and its head gives codebook j's logits; extra = 0.
// All of a row's layers use the row's position (its backbone row index).

// Tower runs the codebook tower over a growing sequence of rows. Text rows go
// through every layer at once (Text); an audio row goes Shared, then
// Residual(1), …, Residual(codebooks−1), the codes sampled in between. It is
// not safe for concurrent use.
type Tower struct {
	cfg     *drama3.AudioConfig
	w       *drama3.Tower[[]float32]
	entries []int // entries of each codebook, codebook 0 first
	rope    *drama3.InterleavedRope
	caches  []kvCache // shared layers, then residual layers
	pos     int       // rows completed
	next    int       // audio row in progress: the residual layer due next (0: none in progress)
	h       []float32 // the row in progress: the last layer's h_out

	// LayerOutput, when set, receives each layer's h_out [n, Dim] (layer index
	// 0..12: shared first) during a run; it must not keep h.
	LayerOutput func(layer int, h []float32)
}

// NewTower checks the weights against a (at the backbone width a.Dim) and
// returns a tower with empty caches.
func NewTower(a *drama3.AudioConfig, w *drama3.Tower[[]float32]) (*Tower, error) {
	if err := drama3.CheckTower(a, a.Dim, w, floats); err != nil {
		return nil, err
	}
	t := &Tower{cfg: a, w: w, rope: drama3.NewInterleavedRope(a.RotaryDim(), a.RopeBase)}
	for i := 0; i < a.NumCodebooks; i++ {
		t.entries = append(t.entries, a.CodebookEntries(i))
	}
	t.Reset()
	return t, nil
}

// Config is the tower's geometry.
func (t *Tower) Config() *drama3.AudioConfig { return t.cfg }

// Entries is the number of entries of each codebook, codebook 0 first.
func (t *Tower) Entries() []int { return t.entries }

// Len is the number of completed rows since the last Reset.
func (t *Tower) Len() int { return t.pos }

// Reset forgets every row.
func (t *Tower) Reset() {
	g := t.cfg
	t.caches = make([]kvCache, g.SharedLayers+g.ResidualLayers())
	t.pos, t.next, t.h = 0, 0, nil
}

// Text runs n text rows (code mask 0) through every layer, given the
// backbone's final-norm hidden states for them, [n, Dim].
func (t *Tower) Text(hidden []float32, n int) error {
	g := t.cfg
	if t.next != 0 {
		return fmt.Errorf("tower: text rows while audio row %d awaits residual layer %d", t.pos, t.next)
	}
	if len(hidden) != n*g.Dim {
		return fmt.Errorf("tower: %d hidden values for %d rows of %d", len(hidden), n, g.Dim)
	}
	if n == 0 {
		return nil
	}
	h := append([]float32(nil), hidden...)
	emb := make([]float32, n*g.Dim) // mask 0
	for li := 0; li < len(t.caches); li++ {
		t.layer(li, h, emb, n)
	}
	t.pos += n
	return nil
}

// Shared starts an audio row: the shared layers over the backbone's
// final-norm hidden state of the row, [Dim], with codebook 0 = code0.
func (t *Tower) Shared(hidden []float32, code0 int) error {
	g := t.cfg
	if t.next != 0 {
		return fmt.Errorf("tower: audio row %d started while row %d awaits residual layer %d", t.pos+1, t.pos, t.next)
	}
	if len(hidden) != g.Dim {
		return fmt.Errorf("tower: hidden state has %d values, dim is %d", len(hidden), g.Dim)
	}
	emb, err := t.embed(0, code0)
	if err != nil {
		return err
	}
	t.h = append(t.h[:0], hidden...)
	for li := 0; li < g.SharedLayers; li++ {
		t.layer(li, t.h, emb, 1)
	}
	t.next = 1
	return nil
}

// Residual runs residual layer j (1 ≤ j < codebooks) of the audio row in
// progress with codebook j−1 = prev embedded and writes codebook j's logits.
// The row completes after the last residual layer.
func (t *Tower) Residual(j, prev int, logits []float32) error {
	g := t.cfg
	if t.next == 0 || j != t.next {
		return fmt.Errorf("tower: residual layer %d called out of order (due: %d; 0 means no audio row started)", j, t.next)
	}
	if len(logits) != t.entries[j] {
		return fmt.Errorf("tower: %d logits for codebook %d of %d entries", len(logits), j, t.entries[j])
	}
	emb, err := t.embed(j-1, prev)
	if err != nil {
		return err
	}
	li := g.SharedLayers + j - 1
	t.layer(li, t.h, emb, 1)
	MatVec(logits, t.w.Residual[j-1].Head, t.h, t.entries[j], g.Dim)
	t.next++
	if t.next == len(t.entries) {
		t.next = 0
		t.pos++
	}
	return nil
}

// embed returns a copy of codebook cb's embedding of code.
func (t *Tower) embed(cb, code int) ([]float32, error) {
	g := t.cfg
	if code < 0 || code >= t.entries[cb] {
		return nil, fmt.Errorf("tower: code %d outside codebook %d's [0, %d)", code, cb, t.entries[cb])
	}
	return append([]float32(nil), t.w.Embeddings[cb][code*g.Dim:(code+1)*g.Dim]...), nil
}

// layer runs tower layer li over n rows at positions pos…pos+n−1: h [n, Dim]
// is h_in on entry and h_out on return; emb [n, Dim] is mask·E[code].
func (t *Tower) layer(li int, h, emb []float32, n int) {
	g := t.cfg
	var lw *drama3.TowerLayer[[]float32]
	if li < g.SharedLayers {
		lw = &t.w.Shared[li]
	} else {
		lw = &t.w.Residual[li-g.SharedLayers]
	}
	D := g.Dim
	cat := make([]float32, n*2*D)
	for i := 0; i < n; i++ {
		RMSNorm(cat[i*2*D:i*2*D+D], emb[i*D:(i+1)*D], lw.ENorm, float32(g.NormEps))
		RMSNorm(cat[i*2*D+D:(i+1)*2*D], h[i*D:(i+1)*D], lw.HNorm, float32(g.NormEps))
	}
	x := make([]float32, n*D)
	MatMulRows(x, lw.EHProj, cat, n, D, 2*D)

	normed := make([]float32, n*D)
	mixed := make([]float32, n*D)
	plainNormRows(normed, x, lw.AttentionNorm, n, D, float32(g.NormEps))
	t.attention(mixed, normed, n, lw, &t.caches[li])
	Add(x, mixed)

	plainNormRows(normed, x, lw.FFNNorm, n, D, float32(g.NormEps))
	gate := make([]float32, n*g.IntermediateSize)
	up := make([]float32, n*g.IntermediateSize)
	MatMulRows(gate, lw.W1, normed, n, g.IntermediateSize, D)
	MatMulRows(up, lw.W3, normed, n, g.IntermediateSize, D)
	SwiGLU(gate, gate, up)
	MatMulRows(mixed, lw.W2, gate, n, D, g.IntermediateSize)
	Add(x, mixed)

	plainNormRows(h, x, lw.OutNorm, n, D, float32(g.NormEps))
	if t.LayerOutput != nil {
		t.LayerOutput(li, h)
	}
}

// attention is the tower block's attention: fused wqkv, interleaved-pair RoPE
// on q and k, grouped-query causal softmax (scale head_dim^-0.5) over the
// layer's cache, wo. Rows are at positions t.pos…t.pos+n−1.
func (t *Tower) attention(out, x []float32, n int, lw *drama3.TowerLayer[[]float32], kv *kvCache) {
	g := t.cfg
	D, hd, nh, nkv := g.Dim, g.HeadDim, g.NumHeads, g.NumKVHeads
	width := (nh + 2*nkv) * hd
	qkv := make([]float32, n*width)
	MatMulRows(qkv, lw.WQKV, x, n, width, D)
	pos0 := t.pos
	for r := 0; r < n; r++ {
		row := qkv[r*width : (r+1)*width]
		for h := 0; h < nh+nkv; h++ { // query heads, then key heads
			t.rope.Apply(row[h*hd:(h+1)*hd], pos0+r)
		}
		kv.k = append(kv.k, row[nh*hd:(nh+nkv)*hd]...)
		kv.v = append(kv.v, row[(nh+nkv)*hd:]...)
	}

	attn := make([]float32, n*nh*hd)
	causalAttention(attn, qkv, width, hd, false, kv, n, pos0, nh, nkv, hd)
	MatMulRows(out, lw.WO, attn, n, D, nh*hd)
}

// plainNormRows applies the plain-gain RMSNorm to each of n rows of width w.
func plainNormRows(dst, x, weight []float32, n, w int, eps float32) {
	for i := 0; i < n; i++ {
		RMSNorm(dst[i*w:(i+1)*w], x[i*w:(i+1)*w], weight, eps)
	}
}

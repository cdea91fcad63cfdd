//go:build cuda

package cuda

import (
	"encoding/binary"
	"fmt"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// This file binds the device tower (TowerTensors) to the whole model's
// weight arena (DeviceWeights), by the tensors' places in the one weight
// tree (drama3.Model[*Param]): the same arena the backbone reads, so a
// model is on the device once. What the tower's kernels read in another form
// than the checkpoint stores goes into a small block of its own (TowerExtras):
// norms as float32 (checkpoints store BF16), a matrix stored as float32 as
// BF16, and the semantic head gathered from the LM head rows of the semantic
// tokens and end of speech when the checkpoint has no semantic_head.

// TowerExtras is the device block BindTower filled; Free gives it back.
type TowerExtras struct{ Block *Block }

// Free gives the block back (nil-safe).
func (x *TowerExtras) Free(d *Device) error {
	if x == nil || x.Block == nil {
		return nil
	}
	err := d.Free(x.Block)
	x.Block = nil
	return err
}

// towerExtra is one piece of the extras block: its source, its form and
// where it goes.
type towerExtra struct {
	src    *drama3.Param
	toF32  bool // BF16 → float32 (norms); false: float32 → BF16 (matrices)
	off    int64
	dst    *Tensor
	elems  int64
	gather bool // the semantic head from LM head rows
}

// BindTower returns the tower's tensors in w's arena and the extras block.
// semanticTokens are the token ids of <|semantic:c|>; endToken the id of
// <|im_end|> (read only when the checkpoint has no semantic head).
func BindTower(d *Device, w *DeviceWeights, semanticTokens []int, endToken int) (*TowerTensors, *TowerExtras, error) {
	m := w.Weights
	cfg := m.Config
	g, err := TowerGeometryOf(&cfg.Audio)
	if err != nil {
		return nil, nil, err
	}
	if g.Dim != cfg.Text.HiddenSize {
		return nil, nil, fmt.Errorf("cuda tower: audio dim %d differs from the backbone's hidden size %d", g.Dim, cfg.Text.HiddenSize)
	}
	t := &TowerTensors{Geometry: g, TextVocab: cfg.Text.VocabSize, SemanticTokens: append([]int(nil), semanticTokens...)}
	var extras []towerExtra
	var size int64
	place := func(x towerExtra, bytes int64) {
		x.off = (size + 255) &^ 255
		size = x.off + bytes
		extras = append(extras, x)
	}
	var bindErr error
	// bf16 binds a matrix the kernels read as BF16.
	bf16 := func(dst *Tensor, p *drama3.Param) {
		if bindErr != nil {
			return
		}
		dt, ok := w.Layout.Tensor(p)
		if p == nil || !ok {
			bindErr = fmt.Errorf("cuda tower: a tower tensor is not on the device")
			return
		}
		switch dt.DType {
		case checkpoint.BF16:
			*dst = Tensor{Block: w.Block(dt), Off: dt.Off}
		case checkpoint.F32:
			n := dt.Bytes() / 4
			place(towerExtra{src: p, dst: dst, elems: n}, n*2)
		default:
			bindErr = fmt.Errorf("cuda tower: %s is %s; the tower reads BF16 or float32 matrices", p.Name, dt.DType)
		}
	}
	// f32 binds a vector the kernels read as float32.
	f32 := func(dst *Tensor, p *drama3.Param) {
		if bindErr != nil {
			return
		}
		dt, ok := w.Layout.Tensor(p)
		if p == nil || !ok {
			bindErr = fmt.Errorf("cuda tower: a tower norm is not on the device")
			return
		}
		switch dt.DType {
		case checkpoint.F32:
			*dst = Tensor{Block: w.Block(dt), Off: dt.Off}
		case checkpoint.BF16:
			n := dt.Bytes() / 2
			place(towerExtra{src: p, dst: dst, elems: n, toF32: true}, n*4)
		default:
			bindErr = fmt.Errorf("cuda tower: %s is %s; tower norms are BF16 or float32", p.Name, dt.DType)
		}
	}
	layer := func(dst *TowerLayerTensors, L *drama3.TowerLayer[*drama3.Param], head bool) {
		f32(&dst.ENorm, L.ENorm)
		f32(&dst.HNorm, L.HNorm)
		f32(&dst.AttentionNorm, L.AttentionNorm)
		f32(&dst.FFNNorm, L.FFNNorm)
		f32(&dst.OutNorm, L.OutNorm)
		bf16(&dst.EHProj, L.EHProj)
		bf16(&dst.WQKV, L.WQKV)
		bf16(&dst.WO, L.WO)
		bf16(&dst.W1, L.W1)
		bf16(&dst.W3, L.W3)
		bf16(&dst.W2, L.W2)
		if head {
			bf16(&dst.Head, L.Head)
		}
	}
	t.Codebooks = make([]Tensor, len(m.Tower.Embeddings))
	for i, p := range m.Tower.Embeddings {
		bf16(&t.Codebooks[i], p)
	}
	t.Shared = make([]TowerLayerTensors, len(m.Tower.Shared))
	for i := range m.Tower.Shared {
		layer(&t.Shared[i], &m.Tower.Shared[i], false)
	}
	t.Residual = make([]TowerLayerTensors, len(m.Tower.Residual))
	for i := range m.Tower.Residual {
		layer(&t.Residual[i], &m.Tower.Residual[i], true)
	}
	bf16(&t.TextEmbed, m.Embed)
	D := int64(g.Dim)
	if m.SemanticHead != nil {
		bf16(&t.SemanticHead, m.SemanticHead)
	} else {
		var lm Tensor
		bf16(&lm, m.LMHead)
		if bindErr == nil && lm.Block == nil {
			bindErr = fmt.Errorf("cuda tower: the LM head is stored as float32; the semantic head is gathered from BF16 rows")
		}
		place(towerExtra{dst: &t.SemanticHead, gather: true}, int64(g.Entries[0]+1)*D*2)
		idsOff := (size + 255) &^ 255
		size = idsOff + int64(g.Entries[0]+1)*4
		ids := append(append([]int(nil), semanticTokens...), endToken)
		for _, id := range ids {
			if bindErr == nil && (id < 0 || id >= cfg.Text.VocabSize) {
				bindErr = fmt.Errorf("cuda tower: semantic head token id %d outside the vocabulary [0, %d)", id, cfg.Text.VocabSize)
			}
		}
		if bindErr != nil {
			return nil, nil, bindErr
		}
		return finishTowerBind(d, w, t, extras, size, &gatherSpec{lm: lm, ids: ids, idsOff: idsOff})
	}
	if bindErr != nil {
		return nil, nil, bindErr
	}
	return finishTowerBind(d, w, t, extras, size, nil)
}

// gatherSpec is the semantic head's gather from the LM head.
type gatherSpec struct {
	lm     Tensor
	ids    []int
	idsOff int64
}

// finishTowerBind allocates the extras block and fills it: conversions on
// the host (a few MB of norms at most), the gather on the device.
func finishTowerBind(d *Device, w *DeviceWeights, t *TowerTensors, extras []towerExtra, size int64, gs *gatherSpec) (*TowerTensors, *TowerExtras, error) {
	x := &TowerExtras{}
	if size == 0 {
		return t, x, t.Check()
	}
	var err error
	if x.Block, err = d.Alloc(size); err != nil {
		return nil, nil, fmt.Errorf("cuda tower: %w", err)
	}
	fail := func(err error) (*TowerTensors, *TowerExtras, error) {
		x.Free(d)
		return nil, nil, err
	}
	for _, e := range extras {
		*e.dst = Tensor{Block: x.Block, Off: e.off}
		if e.gather {
			continue
		}
		dt, _ := w.Layout.Tensor(e.src)
		if e.toF32 {
			raw := make([]uint16, e.elems)
			if err := Download(d, raw, w.Arena, dt.Off); err != nil {
				return fail(err)
			}
			out := make([]float32, e.elems)
			for i, v := range raw {
				out[i] = checkpoint.BF16ToF32(v)
			}
			if err := Upload(d, x.Block, e.off, out); err != nil {
				return fail(err)
			}
			continue
		}
		raw := make([]float32, e.elems)
		if err := Download(d, raw, w.Arena, dt.Off); err != nil {
			return fail(err)
		}
		out := make([]byte, 2*e.elems)
		for i, v := range raw {
			binary.LittleEndian.PutUint16(out[2*i:], checkpoint.F32ToBF16(v))
		}
		if err := Upload(d, x.Block, e.off, out); err != nil {
			return fail(err)
		}
	}
	if gs != nil {
		ids := make([]int32, len(gs.ids))
		for i, id := range gs.ids {
			ids[i] = int32(id)
		}
		if err := Upload(d, x.Block, gs.idsOff, ids); err != nil {
			return fail(err)
		}
		idb := &Block{Kind: DeviceMem, Ptr: x.Block.Ptr + uintptr(gs.idsOff), Bytes: int64(len(ids)) * 4}
		if err := d.Run(func(q *Queue) error {
			return q.GatherBF16Rows(t.SemanticHead, gs.lm, idb, len(ids), t.Geometry.Dim)
		}); err != nil {
			return fail(err)
		}
		if err := d.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := t.Check(); err != nil {
		return fail(err)
	}
	return t, x, nil
}

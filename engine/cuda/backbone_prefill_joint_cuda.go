//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/drama3"
)

// A joint prefill pass: the prompt rows of several takes, each appended to
// its own slot (Plan.Slots), in one pass of the backbone. A prefill pass is
// bound by the weights it streams (every routed expert its rows use, the
// dense projections), and these are read once for all the rows of the pass:
// the embedding, the norms, the MoE's projections, router and experts run
// over every row together, while each take's mixers (DeltaNet's chunked
// form, attention over its KV cache) run over its own rows on its own
// slot's states, in blocks as its own passes would (mixerInBlocks). A take's
// rows are then computed as in a pass of its rows alone: under exact
// numerics bit for bit (each row's projections and experts are its own sums,
// whatever rows share the pass), under fast within the GEMMs' tolerance.

// SlotRows is one take's rows of a joint pass: rows appended to slot Slot.
type SlotRows struct {
	Slot int
	Rows []BackboneRow
}

// jointSpan is a take's rows in a joint pass: pass rows [at, at+n), after
// the before rows its slot holds; its mixer blocks' first positions are
// BlockPos entries block….
type jointSpan struct {
	slot, at, n, before, block int
}

// JointBlocks is the mixer blocks of n rows in a pass: what a take's rows
// take of a joint pass's BlockPos entries (JointBlockLimit).
func (p *BackbonePlan) JointBlocks(n int) int {
	blk := p.MixerRows()
	return (n + blk - 1) / blk
}

// JointBlockLimit is the most mixer blocks one joint pass holds: the
// plan's BlockPos entries (one a block of MixerRows of a pass of Chunk rows).
func (p *BackbonePlan) JointBlockLimit() int { return p.JointBlocks(p.Chunk) }

// PrefillSlots appends parts[k].Rows to slot parts[k].Slot for every k in
// one pass (the slots distinct, every part at least one row, at most
// Plan.Chunk rows and JointBlockLimit mixer blocks in all); the rows'
// final-norm hidden states are left at Plan.Out, the parts' rows one after
// the other in order. Nothing is read back: the caller reads Out on the
// stream (the tower's prompt rows). A bad part changes nothing.
func (b *Backbone) PrefillSlots(parts []SlotRows) error {
	p := b.Plan
	H := p.H
	var spans []jointSpan
	var rows []BackboneRow
	var blockPos []int32
	seen := map[int]bool{}
	for k, part := range parts {
		n := len(part.Rows)
		switch {
		case part.Slot < 0 || part.Slot >= b.Slots():
			return fmt.Errorf("backbone: joint part %d: slot %d of %d", k, part.Slot, b.Slots())
		case seen[part.Slot]:
			return fmt.Errorf("backbone: joint part %d: slot %d has two parts in one pass", k, part.Slot)
		case n == 0:
			return fmt.Errorf("backbone: joint part %d: no rows", k)
		case b.SlotLen(part.Slot)+n > p.Capacity:
			return fmt.Errorf("backbone: joint part %d: %d rows after %d exceed the context limit of %d rows", k, n, b.SlotLen(part.Slot), p.Capacity)
		}
		seen[part.Slot] = true
		sp := jointSpan{slot: part.Slot, at: len(rows), n: n, before: b.SlotLen(part.Slot), block: len(blockPos)}
		for s := 0; s < n; s += p.MixerRows() {
			blockPos = append(blockPos, int32(sp.before+s))
		}
		spans = append(spans, sp)
		rows = append(rows, part.Rows...)
	}
	if len(rows) > p.Chunk || len(blockPos) > p.JointBlockLimit() {
		return fmt.Errorf("backbone: a joint pass of %d rows in %d mixer blocks (at most %d rows, %d blocks)", len(rows), len(blockPos), p.Chunk, p.JointBlockLimit())
	}
	N := len(rows)
	toks := make([]int32, N)
	emb := make([]float32, N*H)
	if err := b.rowInputs(rows, toks, emb); err != nil {
		return err
	}
	if err := firstErr(Upload(b.d, b.work, p.Toks, toks), b.uploadEmbeddings(toks, emb), Upload(b.d, b.work, p.BlockPos, blockPos)); err != nil {
		return err
	}
	if err := b.d.Run(func(q *Queue) error { return b.inPass(N, func() error { return b.enqueueJoint(q, N, spans) }) }); err != nil {
		return err
	}
	for _, sp := range spans {
		b.advance([]int{sp.slot}, sp.n)
	}
	return nil
}

// enqueueJoint is the forward of a joint pass of n rows (inputs in
// Toks/Emb, BlockPos written): enqueue's layers with each span's mixer on
// its slot, then every slot's position advanced by its rows.
func (b *Backbone) enqueueJoint(q *Queue, n int, spans []jointSpan) error {
	p := b.Plan
	H := p.H
	eps, err := b.enqueueEntry(q, n)
	if err != nil {
		return err
	}
	x, mixOut, normed := b.scratch(p.X, n*H*4), b.scratch(p.MixOut, n*H*4), b.scratch(p.NormedMoE, n*p.Hp*4)
	for i := range b.layers {
		L := &b.layers[i]
		for _, sp := range spans {
			v, Ls := b.rowsView(sp.at, sp.block), b.slotLayer(L, sp.slot)
			if err := v.mixerInBlocks(q, Ls, sp.n, sp.before+sp.n); err != nil {
				return fmt.Errorf("layer %d, slot %d: %w", i, sp.slot, err)
			}
		}
		pw, err := L.postNorm.view(int64(H*4), "post norm")
		if err != nil {
			return err
		}
		if err := q.AddRMSNormZC(x, mixOut, normed, pw, n, H, p.Hp, eps); err != nil {
			return err
		}
		next, dst := b.afterLayer(i)
		if err := b.moe(q, L, n, next, dst, eps); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
	}
	for _, sp := range spans {
		if err := q.AddInt32(b.t(p.Pos+4*int64(sp.slot)), sp.n); err != nil {
			return err
		}
	}
	return nil
}

// slotLayer is layer L with its mixer's state (DeltaNet state or KV cache)
// slot s's, as UseSlot binds it.
func (b *Backbone) slotLayer(L *backboneLayer, s int) *backboneLayer {
	c := *L
	off := int64(s) * b.Plan.SlotBytes
	if L.dn != nil {
		dn := *L.dn
		dn.State = b.t(b.Plan.States[c.layer] + off)
		c.dn = &dn
	} else {
		at := *L.at
		at.KV = b.t(b.Plan.States[c.layer] + off)
		c.at = &at
	}
	return &c
}

// checkPromptTokens refuses a prompt whose text rows' token ids are outside
// the vocabulary (what Prefill's checkRows refuses).
func (b *Backbone) checkPromptTokens(p drama3.Prompt) error {
	for r, row := range p {
		if row.Codes != nil {
			continue
		}
		if err := b.checkToken(row.Token); err != nil {
			return fmt.Errorf("prompt row %d: %w", r, err)
		}
	}
	return nil
}

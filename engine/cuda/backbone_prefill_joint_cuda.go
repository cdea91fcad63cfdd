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
func (b *Backbone) PrefillSlots(parts []SlotRows) error { return b.PrefillSlotsSplit(parts, 0, nil) }

// PrefillSlotsSplit is the joint passes of parts[:cut] and of parts[cut:]
// as one split pass (backbone_prefill_split_cuda.go): layer i of the
// first, then between (when not nil) for layer i, then layer i of the
// second, each group on its own rows of the pass with the kernels its own
// joint pass would launch, so every row's result is the two passes'. A slot
// may have a part in each group (its second part's rows follow its
// first's); within a group the slots are distinct. The limits are
// PrefillSlots' for all the parts together, and with cut 0 it is
// PrefillSlots. Under a host tier the second group finds each layer's
// experts on the stage where the first left them: a voice prefix's last
// pass and the scripts of the takes begun in that voice cross the bus once.
func (b *Backbone) PrefillSlotsSplit(parts []SlotRows, cut int, between func(q *Queue, layer int) error) error {
	p := b.Plan
	H := p.H
	if cut < 0 || cut > len(parts) || (cut > 0 && cut == len(parts)) {
		return fmt.Errorf("backbone: a joint pass of %d parts cut after %d", len(parts), cut)
	}
	var spans []jointSpan
	var rows []BackboneRow
	var blockPos []int32
	seen := map[int]bool{}
	first := map[int]int{} // the rows of each slot's part in the first group
	for k, part := range parts {
		n := len(part.Rows)
		if k == cut {
			seen = map[int]bool{}
		}
		before := b.SlotLen(part.Slot) + first[part.Slot]
		switch {
		case part.Slot < 0 || part.Slot >= b.Slots():
			return fmt.Errorf("backbone: joint part %d: slot %d of %d", k, part.Slot, b.Slots())
		case seen[part.Slot]:
			return fmt.Errorf("backbone: joint part %d: slot %d has two parts in one pass", k, part.Slot)
		case n == 0:
			return fmt.Errorf("backbone: joint part %d: no rows", k)
		case before+n > p.Capacity:
			return fmt.Errorf("backbone: joint part %d: %d rows after %d exceed the context limit of %d rows", k, n, before, p.Capacity)
		}
		seen[part.Slot] = true
		if k < cut {
			first[part.Slot] = n
		}
		sp := jointSpan{slot: part.Slot, at: len(rows), n: n, before: before, block: len(blockPos)}
		for s := 0; s < n; s += p.MixerRows() {
			blockPos = append(blockPos, int32(sp.before+s))
		}
		spans = append(spans, sp)
		rows = append(rows, part.Rows...)
	}
	if len(rows) > p.Chunk || len(blockPos) > p.JointBlockLimit() {
		return fmt.Errorf("backbone: a joint pass of %d rows in %d mixer blocks (at most %d rows, %d blocks)", len(rows), len(blockPos), p.Chunk, p.JointBlockLimit())
	}
	if cut > 0 && !b.splitAllowed() {
		return fmt.Errorf("backbone: a split joint pass with the routing logged or parts of the forward skipped")
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
	groups := [][]jointSpan{spans}
	if cut > 0 {
		groups = [][]jointSpan{spans[:cut], spans[cut:]}
	}
	if err := b.d.Run(func(q *Queue) error {
		return b.inPass(N, func() error { return b.enqueueJoint(q, N, groups, between) })
	}); err != nil {
		return err
	}
	for _, sp := range spans {
		b.advance([]int{sp.slot}, sp.n)
	}
	return nil
}

// enqueueJoint is the forward of a joint pass of n rows (inputs in
// Toks/Emb, BlockPos written) in groups of spans, each group's rows after
// the group before's: layer by layer, each group's layer (jointLayer) in
// turn, with between after the first group's; then every slot's position
// advanced by its rows.
func (b *Backbone) enqueueJoint(q *Queue, n int, groups [][]jointSpan, between func(q *Queue, layer int) error) error {
	eps, err := b.enqueueEntry(q, n)
	if err != nil {
		return err
	}
	for i := range b.layers {
		for g, spans := range groups {
			if err := b.jointLayer(q, i, spans, eps); err != nil {
				return err
			}
			if g == 0 && len(groups) > 1 && between != nil {
				if err := between(q, i); err != nil {
					return fmt.Errorf("layer %d: %w", i, err)
				}
			}
		}
	}
	for _, spans := range groups {
		for _, sp := range spans {
			if err := q.AddInt32(b.t(b.Plan.Pos+4*int64(sp.slot)), sp.n); err != nil {
				return err
			}
		}
	}
	return nil
}

// jointLayer enqueues layer i of a joint pass's group of spans (the pass's
// rows from the first span's on): each span's mixer on its slot, then the
// post norm and the MoE over every row of the group together.
func (b *Backbone) jointLayer(q *Queue, i int, spans []jointSpan, eps float32) error {
	H := b.Plan.H
	L := &b.layers[i]
	n := 0
	for _, sp := range spans {
		v, Ls := b.rowsView(sp.at, sp.block), b.slotLayer(L, sp.slot)
		if err := v.mixerInBlocks(q, Ls, sp.n, sp.before+sp.n); err != nil {
			return fmt.Errorf("layer %d, slot %d: %w", i, sp.slot, err)
		}
		n += sp.n
	}
	g := b.rowsView(spans[0].at, 0) // the group's rows
	p := g.Plan
	x, mixOut, normed := g.scratch(p.X, n*H*4), g.scratch(p.MixOut, n*H*4), g.scratch(p.NormedMoE, n*p.Hp*4)
	pw, err := L.postNorm.view(int64(H*4), "post norm")
	if err != nil {
		return err
	}
	if err := q.AddRMSNormZC(x, mixOut, normed, pw, n, H, p.Hp, eps); err != nil {
		return err
	}
	next, dst := g.afterLayer(i)
	if err := g.moe(q, L, n, next, dst, eps); err != nil {
		return fmt.Errorf("layer %d: %w", i, err)
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

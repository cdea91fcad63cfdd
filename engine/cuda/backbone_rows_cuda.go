//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"proscenium/engine/drama3"
)

// Several takes in one step: a backbone planned with Slots > 1
// (PlanBackboneSlots, LoadBackboneSlots) holds each take's DeltaNet, conv
// and KV state and position in its own slot, and StepRows appends one row to
// each of B takes at once: the embedding, norms, projections and experts of
// the B rows as one batch (every weight read once for all of them), each
// mixer on its row's slot. The one-take calls (Prefill, Step, Len) address
// the slot UseSlot chose (slot 0 at first), so a take's prompt runs as
// before into its own slot.

// stepRows is the B-row step's state: a captured graph per row count, the
// pinned host rows, and whether enqueue is capturing the B-row step (its
// projections then take the B-row GEMVs).
type stepRows struct {
	graphs    map[int]*Graph
	host      *Block // pinned: tokens, slots, input rows, output rows
	capturing bool
	// Experts is how the B-row step runs its routed experts (ExpertsAuto:
	// ExpertsGEMV, the step's gathered GEMVs and moe_down_rows, whatever a
	// prefill's default); SetStepExperts changes it.
	Experts ExpertPath
	// last is the slots of the last StepRows (what a replay advances).
	last []int
}

// BackboneSlotsBytes is BackboneBytes for slots takes' states.
func BackboneSlotsBytes(cfg *drama3.Config, layout *WeightLayout, capacity, slots int) (int64, *BackbonePlan, error) {
	return BackbonePassBytes(cfg, layout, capacity, slots, prefillRows)
}

// BackbonePassBytes is BackboneSlotsBytes with prefill passes of up to rows
// rows (PlanBackbonePass).
func BackbonePassBytes(cfg *drama3.Config, layout *WeightLayout, capacity, slots, rows int) (int64, *BackbonePlan, error) {
	if len(layout.Experts) == 0 {
		return 0, nil, fmt.Errorf("gpu backbone: no layers")
	}
	plan, err := PlanBackbonePass(cfg, layout.Experts[0], capacity, slots, rows)
	if err != nil {
		return 0, nil, err
	}
	return layout.Bytes + plan.Bytes, plan, nil
}

// LoadBackboneSlots is LoadBackbone for slots takes' states (the B-row step).
func LoadBackboneSlots(d *Device, ck *drama3.Checkpoint, capacity, slots int, progress LoadProgress) (*Backbone, error) {
	if err := ck.Report.Err(); err != nil {
		return nil, err
	}
	layout, err := LayoutWeights(ck.Weights)
	if err != nil {
		return nil, err
	}
	// The pass rows by PrefillPassRows: the longest whose backbone fits the
	// device whole (this load has no host tier: it admits every byte).
	rows, err := PrefillPassRows(ck.Config.Text.NumExpertsPerTok, func(rows int) (bool, error) {
		need, _, err := BackbonePassBytes(ck.Config, layout, capacity, slots, rows)
		if err != nil {
			return false, err
		}
		p, err := d.PlanTier(TierModel(ck.Config, layout, need))
		return err == nil && WholeOnDevice(p, 0), nil
	})
	if err != nil {
		return nil, err
	}
	need, plan, err := BackbonePassBytes(ck.Config, layout, capacity, slots, rows)
	if err != nil {
		return nil, err
	}
	if err := d.Do(func() error { return d.Pool.Admit(need) }); err != nil {
		return nil, err
	}
	w, err := d.LoadWeights(ck.Index, ck.Weights, layout, progress)
	if err != nil {
		return nil, err
	}
	b, err := NewBackbone(d, w, plan)
	if err != nil {
		w.Free(d)
		return nil, err
	}
	return b, nil
}

// Slots is the takes whose states the backbone holds.
func (b *Backbone) Slots() int { return max(b.Plan.Slots, 1) }

// Slot is the slot the one-take calls address.
func (b *Backbone) Slot() int { return b.slot }

// SlotLen is the rows slot s holds.
func (b *Backbone) SlotLen(s int) int {
	if s == b.slot {
		return b.pos
	}
	return b.slotPos[s]
}

// posTensor is the position (int32) of the slot the one-take calls address.
func (b *Backbone) posTensor() Tensor { return b.t(b.Plan.Pos + 4*int64(b.slot)) }

// UseSlot makes the one-take calls (Prefill, Step, Len, the profiles)
// address slot s's states and position; the one-row step graph captured for
// another slot is dropped.
func (b *Backbone) UseSlot(s int) error {
	if s < 0 || s >= b.Slots() {
		return fmt.Errorf("backbone: slot %d of %d", s, b.Slots())
	}
	if s == b.slot {
		return nil
	}
	b.slotPos[b.slot] = b.pos
	b.slot, b.pos = s, b.slotPos[s]
	off := int64(s) * b.Plan.SlotBytes
	for i := range b.layers {
		L := &b.layers[i]
		if L.dn != nil {
			L.dn.State = b.t(b.Plan.States[i] + off)
		} else {
			L.at.KV = b.t(b.Plan.States[i] + off)
		}
	}
	b.dropStep()
	return nil
}

// ResetSlot forgets slot s's rows (a take ended; the slot takes a new one):
// its states to zero, its position 0; the other slots keep theirs. With one
// slot it is Reset.
func (b *Backbone) ResetSlot(s int) error {
	if s < 0 || s >= b.Slots() {
		return fmt.Errorf("backbone: slot %d of %d", s, b.Slots())
	}
	if s == b.slot {
		b.pos = 0
	}
	b.slotPos[s] = 0
	return b.d.Run(func(q *Queue) error {
		if err := q.ZeroTensor(b.t(int64(s)*b.Plan.SlotBytes), b.Plan.SlotBytes); err != nil {
			return err
		}
		// The fused step's counters are zero between launches; Reset zeroes
		// them too, and so does this (no launch runs now).
		if err := q.ZeroTensor(b.t(b.Plan.Counters), int64(4*b.Plan.CounterWords())); err != nil {
			return err
		}
		return q.ZeroTensor(b.t(b.Plan.Pos+4*int64(s)), 4)
	})
}

// SetLen says the slot the one-take calls address holds rows rows (its
// states were restored from elsewhere, a voice prefix): its position on the
// device and the host's count.
func (b *Backbone) SetLen(rows int) error {
	if rows < 0 || rows > b.Plan.Capacity {
		return fmt.Errorf("backbone: %d rows (the context limit is %d)", rows, b.Plan.Capacity)
	}
	if err := Upload(b.d, b.work, b.Plan.Pos+4*int64(b.slot), []int32{int32(rows)}); err != nil {
		return err
	}
	b.pos = rows
	return nil
}

// AdvanceSlots adds a row to the host's count of each slot (SlotLen), for a
// caller that ran EnqueueStepRows in its own graph; the slots are the step's.
func (b *Backbone) AdvanceSlots(slots []int) error {
	for i, s := range slots {
		switch {
		case s < 0 || s >= b.Slots():
			return fmt.Errorf("backbone: row %d: slot %d of %d", i, s, b.Slots())
		case b.SlotLen(s) >= b.Plan.Capacity:
			return fmt.Errorf("backbone: row %d: slot %d holds %d rows, the context limit", i, s, b.Plan.Capacity)
		}
	}
	b.advance(slots, 1)
	return nil
}

// maxStepRows is the most rows one StepRows takes here.
func (b *Backbone) maxStepRows() int { return min(MaxStepRows, b.Slots(), b.Plan.Chunk) }

// checkStepRows validates a B-row step: 1 ≤ B ≤ maxStepRows rows, slots
// distinct and in range, each with a free row of context.
func (b *Backbone) checkStepRows(rows []BackboneRow, slots []int) error {
	if len(rows) < 1 || len(rows) > b.maxStepRows() {
		return fmt.Errorf("backbone: a step of %d rows (1…%d here)", len(rows), b.maxStepRows())
	}
	if len(slots) != len(rows) {
		return fmt.Errorf("backbone: %d rows with %d slots", len(rows), len(slots))
	}
	seen := make(map[int]bool, len(slots))
	for i, s := range slots {
		switch {
		case s < 0 || s >= b.Slots():
			return fmt.Errorf("backbone: row %d: slot %d of %d", i, s, b.Slots())
		case seen[s]:
			return fmt.Errorf("backbone: row %d: slot %d has two rows in one step", i, s)
		case b.SlotLen(s) >= b.Plan.Capacity:
			return fmt.Errorf("backbone: row %d: slot %d holds %d rows, the context limit", i, s, b.Plan.Capacity)
		}
		seen[s] = true
	}
	return nil
}

// StepRows appends rows[i] to the take in slot slots[i], for every i at
// once, and returns their final-norm hidden states [len(rows), Hidden] in
// the rows' order. Each take's values are those it gets stepped alone (Step
// on its slot): under exact numerics the same bits. The first call with a
// number of rows captures that step's graph; later calls copy the rows and
// slots in, replay it and copy the result out, with one synchronisation. A
// bad row or slot changes nothing.
func (b *Backbone) StepRows(rows []BackboneRow, slots []int) ([]float32, error) {
	if err := b.checkStepRows(rows, slots); err != nil {
		return nil, err
	}
	n, H := len(rows), b.Plan.H
	if b.rows.host == nil {
		var err error
		if b.rows.host, err = b.d.AllocPinned(int64(4 * (2*MaxStepRows + 2*MaxStepRows*H))); err != nil {
			return nil, err
		}
	}
	words := unsafe.Slice((*int32)(b.rows.host.Host), 2*MaxStepRows)
	toks, slotIDs := words[:n], words[MaxStepRows:MaxStepRows+n]
	vals := unsafe.Slice((*float32)(unsafe.Add(b.rows.host.Host, 4*2*MaxStepRows)), 2*MaxStepRows*H)
	in, out := vals[:n*H], vals[MaxStepRows*H:MaxStepRows*H+n*H]
	if err := b.rowInputs(rows, toks, in); err != nil {
		return nil, err
	}
	embeds := false
	for i, s := range slots {
		slotIDs[i] = int32(s)
		embeds = embeds || toks[i] < 0
	}
	err := b.d.Run(func(q *Queue) error {
		g, err := b.rowsGraph(q, n)
		if err != nil {
			return err
		}
		s := q.Stream()
		dev := func(off int64) cu.DevicePtr { return cu.DevicePtr(b.work.Ptr + uintptr(off)) }
		if err := cu.MemcpyHtoDAsync(dev(b.Plan.Toks), unsafe.Pointer(&toks[0]), int64(4*n), s); err != nil {
			return err
		}
		if err := cu.MemcpyHtoDAsync(dev(b.Plan.RowSlots), unsafe.Pointer(&slotIDs[0]), int64(4*n), s); err != nil {
			return err
		}
		if embeds {
			if err := cu.MemcpyHtoDAsync(dev(b.Plan.Emb), unsafe.Pointer(&in[0]), int64(4*n*H), s); err != nil {
				return err
			}
		}
		if err := q.LaunchGraph(g); err != nil {
			return err
		}
		if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&out[0]), dev(b.Plan.Out), int64(4*n*H), s); err != nil {
			return err
		}
		return s.Synchronize()
	})
	if err != nil {
		return nil, err
	}
	b.advance(slots, 1)
	b.rows.last = append(b.rows.last[:0], slots...)
	return append([]float32(nil), out...), nil
}

// advance adds n rows to the host's count of each slot.
func (b *Backbone) advance(slots []int, n int) {
	for _, s := range slots {
		if s == b.slot {
			b.pos += n
		} else {
			b.slotPos[s] += n
		}
	}
}

// rowsGraph is the captured B-row step of n rows, captured now if it is not yet.
func (b *Backbone) rowsGraph(q *Queue, n int) (*Graph, error) {
	if g := b.rows.graphs[n]; g != nil {
		return g, nil
	}
	g, err := q.Capture(func(q *Queue) error { return b.EnqueueStepRows(q, n) })
	if err != nil {
		return nil, fmt.Errorf("backbone: capturing the step graph of %d rows: %w", n, err)
	}
	if b.rows.graphs == nil {
		b.rows.graphs = map[int]*Graph{}
	}
	b.rows.graphs[n] = g
	return g, nil
}

// ProfileStepRows replays the captured B-row step of n rows once inside a
// profiler range (ncu --profile-from-start off), after StepRows captured it;
// the slots' state it leaves is meaningless (Reset afterwards).
func (b *Backbone) ProfileStepRows(n int) error {
	g := b.rows.graphs[n]
	if g == nil {
		return fmt.Errorf("backbone: no step of %d rows captured yet", n)
	}
	return b.d.ProfileRange(func(q *Queue) error { return q.LaunchGraph(g) })
}

// EnqueueStepRows puts the B-row step of n rows on q (for a caller's own
// graph, as Frames puts the one-row step in a frame's): the inputs are the
// n token ids at Plan.Toks (−1: the row at Plan.Emb) and the rows' slots
// (int32) at Plan.RowSlots, written before it runs; the rows' final-norm
// hidden states land at Plan.Out [n, Hidden] and each row's slot position
// advances by one. The host's row counts (SlotLen) are the caller's to
// advance (StepRows does).
func (b *Backbone) EnqueueStepRows(q *Queue, n int) error {
	if n < 1 || n > b.maxStepRows() {
		return fmt.Errorf("backbone: a step of %d rows (1…%d here)", n, b.maxStepRows())
	}
	p := b.Plan
	eps, err := b.enqueueEntry(q, n)
	if err != nil {
		return err
	}
	slots := stepSlots{slots: b.t(p.RowSlots), stride: p.SlotBytes / 4, pos: b.t(p.Pos)}
	// The slot kernels add each row's slot to slot 0's states: bind slot 0
	// for the capture, whichever slot the one-take calls address.
	base := func(i int) Tensor { return b.t(p.States[i]) }
	b.rows.capturing = true
	defer func() { b.rows.capturing = false }()
	for i := range b.layers {
		L := &b.layers[i]
		if err := b.mixerRows(q, L, base(i), n, slots, eps); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
		if b.skip&StepMoE != 0 {
			continue
		}
		next, dst := b.afterLayer(i)
		if err := b.moe(q, L, n, next, dst, eps); err != nil {
			return fmt.Errorf("layer %d: %w", i, err)
		}
	}
	return q.AddInt32Slots(slots.pos, slots.slots, n, b.Slots(), 1)
}

// mixerRows is mixer for the n rows of a B-row step: layer L's mixer of each
// row on its slot's state (slot 0's at state), the output projections of the
// rows together, the residual add and the post norm.
func (b *Backbone) mixerRows(q *Queue, L *backboneLayer, state Tensor, n int, s stepSlots, eps float32) error {
	p := b.Plan
	H := p.H
	nm, mix := b.t(p.NormedMix), b.t(p.MixOut)
	x, mixOut, normed := b.scratch(p.X, n*H*4), b.scratch(p.MixOut, n*H*4), b.scratch(p.NormedMoE, n*p.Hp*4)
	pw, err := L.postNorm.view(int64(H*4), "post norm")
	if err != nil {
		return err
	}
	if b.skip&StepMixers != 0 {
		return q.AddRMSNormZC(x, mixOut, normed, pw, n, H, p.Hp, eps)
	}
	var o mixerOut
	if L.dn != nil {
		l := *L.dn
		l.State = state
		o, err = q.deltaNetStepRows(&l, mix, nm, n, s)
	} else {
		l := *L.at
		l.KV = state
		o, err = q.attentionStepRows(&l, mix, nm, n, s, b.scratch(p.Counters+4*counterHeads, 4*p.headCounters()))
	}
	if err != nil {
		return err
	}
	if err := o.projectRows(q, mix, n); err != nil {
		return err
	}
	return q.AddRMSNormZC(x, mixOut, normed, pw, n, H, p.Hp, eps)
}

// StepRowsLaunches is the kernel launches of the captured B-row step of n
// rows (0 before StepRows captures it).
func (b *Backbone) StepRowsLaunches(n int) int {
	if g := b.rows.graphs[n]; g != nil {
		return g.Kernels()
	}
	return 0
}

// TimeStepRows replays the captured B-row step of the last StepRows' rows
// times back to back and returns the device milliseconds per replay (a
// benchmark: the inputs stay as that step left them and each of its rows'
// slots advances by times, so that many rows of each must be free; Reset or
// ResetSlot afterwards).
func (b *Backbone) TimeStepRows(times int) (float64, error) {
	g, err := b.StepRowsReplay(times)
	if err != nil {
		return 0, err
	}
	return b.timeReplays(g, times)
}

// Sibling is another backbone on b's weights and plan: its own work block
// (states, positions, scratch) and step graphs, the same step choices.
// Closing it frees only its own; b must outlive it.
func (b *Backbone) Sibling() (*Backbone, error) {
	s, err := NewBackbone(b.d, b.W, b.Plan)
	if err != nil {
		return nil, err
	}
	s.borrowed = true
	s.Experts, s.ExpertGroup, s.Fused = b.Experts, b.ExpertGroup, b.Fused
	return s, nil
}

// StepRowsReplay is the captured B-row step of the last StepRows' rows, for
// a benchmark that replays it exactly times times (TimeStepRows; beside
// other work, Device.TimeChains): it checks those rows' slots have times rows free and
// counts them as taken (SlotLen); Reset afterwards.
func (b *Backbone) StepRowsReplay(times int) (*Graph, error) {
	g := b.rows.graphs[len(b.rows.last)]
	if g == nil {
		return nil, fmt.Errorf("backbone: no B-row step run yet")
	}
	for _, s := range b.rows.last {
		if b.SlotLen(s)+times > b.Plan.Capacity {
			return nil, fmt.Errorf("backbone: %d replayed steps after %d rows of slot %d exceed the context limit of %d", times, b.SlotLen(s), s, b.Plan.Capacity)
		}
	}
	b.advance(b.rows.last, times)
	return g, nil
}

// TimeStepRowsParts captures a B-row step graph of the last StepRows' rows
// without the parts in skip and returns the device milliseconds per replay
// over times replays (where the B-row step's time goes; the states it
// leaves are meaningless: Reset afterwards).
func (b *Backbone) TimeStepRowsParts(skip StepParts, times int) (float64, error) {
	n := len(b.rows.last)
	if n == 0 {
		return 0, fmt.Errorf("backbone: no B-row step run yet")
	}
	return b.timeParts(skip, times, func(q *Queue) error { return b.EnqueueStepRows(q, n) })
}

// SetStepExperts picks how the B-row step runs its routed experts and drops
// the captured B-row graphs.
func (b *Backbone) SetStepExperts(e ExpertPath) {
	b.rows.Experts = e
	b.dropRows()
}

// dropRows destroys the captured B-row step graphs.
func (b *Backbone) dropRows() {
	for n, g := range b.rows.graphs {
		b.d.Do(func() error { g.Destroy(); return nil })
		delete(b.rows.graphs, n)
	}
}

// closeRows frees what the B-row step holds.
func (b *Backbone) closeRows() {
	b.dropRows()
	if b.rows.host != nil {
		b.d.Free(b.rows.host)
		b.rows.host = nil
	}
}

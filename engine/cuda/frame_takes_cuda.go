//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"unsafe"

	"gorgonia.org/cu"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// This file runs several takes on one device. TakeFrames is the frame
// contract over a set of takes (drama3.TakeSet) with the batched kernels:
// each live take holds a slot of one backbone (Plan.Slots: its DeltaNet,
// conv and KV states and position) and of one tower (TowerOptions.Takes: its
// caches and control block: settings, seed, counters, forced codes,
// result), and one step advances every take named by a frame in one CUDA
// graph per number of them: the takes' feedback rows gathered by slot, the
// B-row backbone step (Backbone.EnqueueStepRows), the B-row tower, heads and
// draws (Tower.FrameRows), one copy of every slot's result to pinned
// memory. Every weight is read once a step for all the takes. A take begins
// by the one-take prefill into its slot (Frames.BeginPrompt on the slot's
// view, the voice prefix cache included) and makes its first frame alone
// right after it (the tower on the prompt's last row); it joins the batch at
// its next frame, and leaves it at once when it ends. Each take decodes on
// its own codec stream. A take's codes are those it makes alone.
//
// NewTake (below) is the other way: a whole Frames per take, stepped in
// turn by drama3.Interleave (the B-row kernels unused).

// TakeFrames is a drama3.TakeSet over the slots of one Frames (LoadFrames
// or NewFrames with FramesOptions.Batched). Calls come from one goroutine.
type TakeFrames struct {
	f        *Frames
	d        *Device
	slots    []*Frames             // slot s's one-take view, made at its first take
	live     map[drama3.TakeID]int // take → slot
	free     []int                 // free slots, lowest last (popped first)
	made     map[int][]FrameResult // a take's next frames made already, oldest first: frame 0 with its prefill, or frames launched ahead
	inflight []takeStep            // steps launched and not yet read, oldest first (Pipeline: one; Ahead2: two)
	ahead    takesAhead            // Ahead2: the second buffers and the events
	slotLive []bool                // a live take holds the slot
	graphs   map[int]*Graph        // the step of n takes
	pinned   *Block                // every slot's control block after a step
	rowHost  *Block                // pinned int32 [MaxStepRows]: the step's rows' slots
	fault    atomic.Pointer[error] // a device error (Fault: asked from other goroutines)
	tap      TakeLogitsTap         // TapLogits (debugging; the pipeline off)
	routeTap TakeRoutesTap         // TapRoutes (debugging; the pipeline off)
	splits   JointSplits           // the joint begins' split passes so far
	closed   bool
}

// JointSplits counts a TakeFrames' split joint passes
// (frame_takes_split_cuda.go): Passes run, and Shared takes begun in them
// from a voice prefix another take made in the same pass.
type JointSplits struct{ Passes, Shared int }

// Splits is the set's split joint passes so far.
func (s *TakeFrames) Splits() JointSplits { return s.splits }

var (
	_ drama3.TakeSet           = (*TakeFrames)(nil)
	_ drama3.TakeAsyncDecoder  = (*TakeFrames)(nil)
	_ drama3.TakeDecodeReadier = (*TakeFrames)(nil)
	_ drama3.TakePrefixCacher  = (*TakeFrames)(nil)
)

// NewTakeFrames makes the set of f's take slots (min of its backbone's
// Slots and its tower's Takes, at most MaxStepRows). The set owns f from
// now on (Close closes it), also when it fails.
func NewTakeFrames(f *Frames) (*TakeFrames, error) {
	n := min(f.bb.Slots(), f.tower.Takes(), MaxStepRows, f.bb.Plan.Chunk)
	if n < 1 {
		f.Close()
		return nil, fmt.Errorf("cuda frames: no take slots")
	}
	s := &TakeFrames{f: f, d: f.d, slots: make([]*Frames, n), live: map[drama3.TakeID]int{},
		made: map[int][]FrameResult{}, slotLive: make([]bool, n), graphs: map[int]*Graph{}}
	for i := n - 1; i >= 0; i-- {
		s.free = append(s.free, i)
	}
	var err error
	if s.pinned, err = f.d.AllocPinned(FrameRowsResultBytes(f.tower.Takes())); err == nil {
		s.rowHost, err = f.d.AllocPinned(4 * MaxStepRows)
	}
	if err == nil && f.opt.Ahead2 && f.opt.Pipeline && f.bb.W.Cache == nil {
		err = s.ahead.alloc(f.d, f.tower.Takes())
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *TakeFrames) CodebookEntries() []int { return s.f.entries }
func (s *TakeFrames) SamplesPerFrame() int   { return s.f.spf }
func (s *TakeFrames) Capacity() int          { return len(s.slots) }

// HostTierRealTimeBound is the real-time factor a step of B takes must stay
// within, under a host tier, for another take to join them
// (drama3.RealTimeBounded). There each take's rows read their own experts
// over the bus, so the step grows with the takes and the audio made a
// second does not: through serve on an H100 under a 22 GiB cap, four takes
// at once ran each at a real-time factor of 1.14 and made 3.5 audio seconds
// a second together, where one alone made 3.8 (docs/PERF.md, session 37).
// A fifth of the frame is left to the codec and the host [decision].
const HostTierRealTimeBound = 0.8

// RealTimeBound implements drama3.RealTimeBounded: HostTierRealTimeBound
// under a host tier; none with every expert on the device, where a step of
// more takes costs far less than their number.
func (s *TakeFrames) RealTimeBound() float64 {
	if s.f.Tier().Tier == TierHostExperts {
		return HostTierRealTimeBound
	}
	return 0
}

var _ drama3.RealTimeBounded = (*TakeFrames)(nil)

// Frames is the model's frames the slots share (benchmarks, the memory report).
func (s *TakeFrames) Frames() *Frames { return s.f }

// Fault is the device error a step or a prefill met (nil: none): after
// one the CUDA context may be unusable. Safe from any goroutine.
func (s *TakeFrames) Fault() error {
	if p := s.fault.Load(); p != nil {
		return *p
	}
	return nil
}

func (s *TakeFrames) setFault(err error) { s.fault.CompareAndSwap(nil, &err) }

// slotFrames is slot i's one-take view of s.f, made at its first use.
func (s *TakeFrames) slotFrames(i int) (*Frames, error) {
	if v := s.slots[i]; v != nil {
		return v, nil
	}
	f := s.f
	v := &Frames{d: f.d, bb: f.bb, tower: f.tower.Slot(i), codec: f.codec, opt: f.opt, semantic: f.semantic,
		endToken: f.endToken, borrowed: true, prefixes: f.prefixes, entries: f.entries, spf: f.spf, inSet: true, slot: i}
	var err error
	if v.pinned, err = f.d.AllocPinned(FrameResultBytes); err != nil {
		return nil, err
	}
	if s.ahead.on { // its own frames alternate buffers too (one take stepped alone)
		if err := v.ahead.alloc(f.d); err != nil {
			s.d.Free(v.pinned)
			return nil, err
		}
	}
	s.slots[i] = v
	return v, nil
}

// resetBackbone forgets the take's backbone rows before a prefill: the
// whole backbone's, or a set's take its slot's alone (the others' go on).
func (f *Frames) resetBackbone() error {
	if !f.inSet {
		return f.bb.Reset()
	}
	if err := f.bb.UseSlot(f.slot); err != nil {
		return err
	}
	return f.bb.ResetSlot(f.slot)
}

// Begin implements drama3.TakeSet: the take's prompt into a free slot
// (Frames.BeginPrompt on its view), then its first frame alone, kept for
// the take's first Step.
func (s *TakeFrames) Begin(ctx context.Context, id drama3.TakeID, p drama3.Prompt, sm sampling.Settings, seed uint64) error {
	if s.closed {
		return fmt.Errorf("take set: closed")
	}
	if _, ok := s.live[id]; ok {
		return fmt.Errorf("take set: take %d is already live", id)
	}
	if len(s.free) == 0 {
		return fmt.Errorf("take set: %d takes are live, the most it holds", len(s.live))
	}
	if err := s.settle(); err != nil {
		return err
	}
	i := s.free[len(s.free)-1]
	v, err := s.slotFrames(i)
	if err != nil {
		return fmt.Errorf("take set: take %d: %w", id, err)
	}
	if err := s.f.bb.UseSlot(i); err != nil {
		return err
	}
	if s.routeTap != nil {
		tap := s.routeTap
		v.promptRoutes = func(row int, layers []StepRoute) { tap(id, true, row, layers) }
	}
	err = v.BeginPrompt(ctx, p, sm, seed)
	v.promptRoutes = nil
	if err != nil {
		if v.fault != nil {
			s.setFault(v.fault)
		}
		return err
	}
	// Frame 0 reads the prompt's last row where the prefill left it (the
	// step's output rows, which the next step overwrites): now.
	if err := v.launch(); err != nil {
		s.setFault(err)
		return err
	}
	if err := s.d.Sync(); err != nil {
		v.begun = false
		s.setFault(err)
		return err
	}
	s.made[i] = []FrameResult{v.tower.ReadResult(v.pinned)}
	if err := s.tapRow(id, 0, v.tower, 0); err != nil {
		return err
	}
	s.free = s.free[:len(s.free)-1]
	s.live[id] = i
	s.slotLive[i] = true
	return nil
}

// Step implements drama3.TakeSet: a take's next frame is the one made
// already when there is one (frame 0 by its Begin, or the frame launched
// ahead by the last Step); the others' are one graph of them all (the B-row
// step and tower), or, for one take, its own frame graph (the one-take
// path: B = 1 pays nothing for the batch). With Pipeline on, the frame
// after this one of every take it made is launched before Step returns, so
// the device works while the caller handles this one (a take that then
// ends has its frame dropped); with Ahead2, two (frame_takes_ahead_cuda.go).
func (s *TakeFrames) Step(frames []drama3.TakeFrame) error {
	if s.closed {
		return fmt.Errorf("take set: closed")
	}
	if !s.ahead.on {
		if err := s.settle(); err != nil {
			return err
		}
	} else {
		// Ahead2: the frame after the one in flight, for each take of
		// that step that goes on, is launched before the wait, so the
		// device holds it when the one in flight ends. Then the steps
		// that carry frames this Step delivers are waited for (the oldest
		// first), not the stream.
		if len(s.inflight) == 1 {
			if next := s.continuing(s.inflight[0].rows); len(next) > 0 {
				if err := s.launch(next); err != nil {
					return s.failAll(err)
				}
			}
		}
		for len(s.inflight) > 0 && s.awaits(frames) {
			if err := s.settleOldest(); err != nil {
				return err
			}
		}
	}
	var rows []int  // slots stepped, in row order
	var which []int // their index in frames
	var made []int  // index in frames of every take given a frame
	for i := range frames {
		tf := &frames[i]
		slot, ok := s.live[tf.ID]
		if !ok {
			tf.Err = fmt.Errorf("take set: take %d is not live", tf.ID)
			continue
		}
		if q := s.made[slot]; len(q) > 0 {
			if len(q) == 1 {
				delete(s.made, slot)
			} else {
				s.made[slot] = q[1:]
			}
			s.deliver(tf, slot, q[0])
			made = append(made, i)
			continue
		}
		v := s.slots[slot]
		if !v.begun {
			tf.Err = fmt.Errorf("cuda frames: take %d: Frame before Begin", tf.ID)
			continue
		}
		if rows := s.f.bb.SlotLen(slot); rows >= s.f.bb.Plan.Capacity {
			tf.Err = fmt.Errorf("cuda frames: frame %d would pass the context limit of %d rows", v.frame, s.f.bb.Plan.Capacity)
			continue
		}
		rows = append(rows, slot)
		which = append(which, i)
	}
	if len(rows) > 0 {
		if err := s.settle(); err != nil { // the stream in order: what is in flight first
			return err
		}
		if err := s.launch(rows); err != nil {
			return s.failAll(err)
		}
		st := s.inflight[len(s.inflight)-1]
		if err := s.wait(st); err != nil {
			return s.failAll(err)
		}
		s.inflight = s.inflight[:len(s.inflight)-1]
		if s.routeTap != nil {
			ids, at := make([]drama3.TakeID, len(rows)), make([]int, len(rows))
			for k, slot := range rows {
				ids[k], at[k] = frames[which[k]].ID, s.slots[slot].frame
			}
			if err := s.tapRoutes(ids, at); err != nil {
				return s.failAll(err)
			}
		}
		for k, slot := range rows {
			if s.tap != nil {
				t, row := s.f.tower, k // the step graph's row k
				if len(rows) == 1 {
					t, row = s.slots[slot].tower, 0 // the take's own frame graph
				}
				if err := s.tapRow(frames[which[k]].ID, s.slots[slot].frame, t, row); err != nil {
					return s.failAll(err)
				}
			}
			s.deliver(&frames[which[k]], slot, s.result(slot, st))
		}
		made = append(made, which...)
	}
	if !s.f.opt.Pipeline {
		return nil
	}
	var next []int
	for _, i := range made {
		tf := &frames[i]
		slot := s.live[tf.ID]
		if tf.Err == nil && !tf.End && s.slots[slot].begun && s.f.bb.SlotLen(slot) < s.f.bb.Plan.Capacity &&
			len(s.made[slot]) == 0 && s.inFlight(slot) == 0 && len(s.inflight) < s.ahead.depth() {
			next = append(next, slot)
		}
	}
	if len(next) > 0 {
		if err := s.launch(next); err != nil {
			s.setFault(err) // these frames are made; the next Step fails
			return nil
		}
	}
	return nil
}

// failAll marks every take's device state undefined after a device error
// (each starts over) and returns it.
func (s *TakeFrames) failAll(err error) error {
	s.setFault(err)
	for _, v := range s.slots {
		if v != nil {
			v.begun = false
		}
	}
	return err
}

// launch enqueues the next frame of the takes in slots rows (in row
// order) and returns without waiting: one take's own frame graph
// (Frames.launch on its slot), or the step graph of len(rows) takes; the
// host's row counts advance. The result is read by result once the
// stream has passed it.
func (s *TakeFrames) launch(rows []int) error {
	st := takeStep{rows: rows}
	if len(rows) == 1 {
		slot := rows[0]
		if err := s.f.bb.UseSlot(slot); err != nil {
			return err
		}
		st.frame = s.nextFrame(slot)
		if err := s.slots[slot].launchFrame(st.frame); err != nil { // counts the row itself
			return err
		}
		s.inflight = append(s.inflight, st)
		return nil
	}
	n := len(rows)
	st.parity = s.ahead.parity()
	ids := unsafe.Slice((*int32)(s.rowsHost(st.parity).Host), MaxStepRows)
	for k, slot := range rows {
		ids[k] = int32(slot)
	}
	if err := s.d.Run(func(q *Queue) error {
		key := 2*n + st.parity
		g := s.graphs[key]
		if g == nil {
			var err error
			if g, err = q.Capture(func(q *Queue) error { return s.enqueueStep(q, n, st.parity) }); err != nil {
				return fmt.Errorf("cuda frames: capturing the step of %d takes: %w", n, err)
			}
			s.graphs[key] = g
		}
		if err := q.LaunchGraph(g); err != nil {
			return err
		}
		if err := s.ahead.record(q, st.parity); err != nil {
			return err
		}
		return s.f.bb.W.Cache.tick(q)
	}); err != nil {
		return err
	}
	s.inflight = append(s.inflight, st)
	return s.f.bb.AdvanceSlots(rows)
}

// result is the frame step st made for the take in slot, after the stream
// passed it: one take's own graph's copy, or its row of the step's.
func (s *TakeFrames) result(slot int, st takeStep) FrameResult {
	if len(st.rows) == 1 {
		v := s.slots[slot]
		return v.tower.ReadResult(v.resultBuffer(st.frame))
	}
	return s.f.tower.ReadResultRow(s.resultRows(st.parity), slot)
}

// settle waits for every step in flight and keeps each live take's
// results for its next Steps.
func (s *TakeFrames) settle() error {
	if len(s.inflight) == 0 {
		return nil
	}
	if err := s.d.Sync(); err != nil {
		s.inflight = nil
		return s.failAll(err)
	}
	for len(s.inflight) > 0 {
		s.keep(s.inflight[0])
		s.inflight = s.inflight[1:]
	}
	return nil
}

// settleOldest waits for the oldest step in flight (by its event under
// Ahead2, leaving the next one running) and keeps its live takes' results.
func (s *TakeFrames) settleOldest() error {
	st := s.inflight[0]
	if err := s.wait(st); err != nil {
		s.inflight = nil
		return s.failAll(err)
	}
	s.keep(st)
	s.inflight = s.inflight[1:]
	return nil
}

// keep queues step st's result for each of its takes still live.
func (s *TakeFrames) keep(st takeStep) {
	for _, slot := range st.rows {
		if s.slotLive[slot] {
			s.made[slot] = append(s.made[slot], s.result(slot, st))
		}
	}
}

// enqueueStep is the step graph of n takes: their slots (rowHost, written
// before each launch) into the backbone's row slots, every row an
// embedding (token −1): the take's feedback row, gathered from its slot's;
// the B-row backbone step; the B-row tower frame on its output rows; every
// slot's control block to pinned memory.
func (s *TakeFrames) enqueueStep(q *Queue, n, parity int) error {
	b, t := s.f.bb, s.f.tower
	p := b.Plan
	dev := func(off int64) cu.DevicePtr { return cu.DevicePtr(b.work.Ptr + uintptr(off)) }
	if err := cu.MemcpyHtoDAsync(dev(p.RowSlots), s.rowsHost(parity).Host, int64(4*n), q.Stream()); err != nil {
		return err
	}
	if err := cu.MemsetD32Async(dev(p.Toks), 0xffffffff, int64(n), q.Stream()); err != nil {
		return err
	}
	rowSlots := b.t(p.RowSlots)
	if err := t.gatherRows(q, b.t(p.Emb), t.feedback, rowSlots, n); err != nil {
		return err
	}
	if err := b.EnqueueStepRows(q, n); err != nil {
		return err
	}
	if err := t.FrameRows(q, b.t(p.Out), n, rowSlots); err != nil {
		return err
	}
	return t.CopyResultRows(q, s.resultRows(parity))
}

// deliver hands take slot's frame result to its TakeFrame and its view.
func (s *TakeFrames) deliver(tf *drama3.TakeFrame, slot int, res FrameResult) {
	v := s.slots[slot]
	if err := res.Err(); err != nil {
		v.begun = false
		tf.Err = fmt.Errorf("cuda frames: frame %d: %w", v.frame, err)
		return
	}
	v.frame++
	if res.End {
		tf.End = true
		return
	}
	if len(tf.Codes) != len(res.Codes) {
		tf.Err = fmt.Errorf("cuda frames: %d codes for %d codebooks", len(tf.Codes), len(res.Codes))
		return
	}
	copy(tf.Codes, res.Codes)
	v.codes = append(v.codes, append([]int(nil), res.Codes...))
}

// view is take id's slot view.
func (s *TakeFrames) view(id drama3.TakeID) (*Frames, error) {
	slot, ok := s.live[id]
	if !ok {
		return nil, fmt.Errorf("take set: take %d is not live", id)
	}
	return s.slots[slot], nil
}

// Decode implements drama3.TakeSet: the take's own codec stream.
func (s *TakeFrames) Decode(id drama3.TakeID, from, to int) ([]float32, error) {
	v, err := s.view(id)
	if err != nil {
		return nil, err
	}
	return v.Decode(from, to)
}

// DecodesAsync implements drama3.TakeAsyncDecoder.
func (s *TakeFrames) DecodesAsync() bool { return s.f.codec != nil }

// DecodeStart implements drama3.TakeAsyncDecoder.
func (s *TakeFrames) DecodeStart(id drama3.TakeID, from, to int) error {
	v, err := s.view(id)
	if err != nil {
		return err
	}
	return v.DecodeStart(from, to)
}

// DecodeReady implements drama3.TakeDecodeReadier.
func (s *TakeFrames) DecodeReady(id drama3.TakeID) bool {
	v, err := s.view(id)
	if err != nil {
		return true // DecodeCollect reports it
	}
	return v.DecodeReady()
}

// DecodeCollect implements drama3.TakeAsyncDecoder.
func (s *TakeFrames) DecodeCollect(id drama3.TakeID) ([]float32, error) {
	v, err := s.view(id)
	if err != nil {
		return nil, err
	}
	return v.DecodeCollect()
}

// PrefixCache implements drama3.TakePrefixCacher: the model's voice cache.
func (s *TakeFrames) PrefixCache() *drama3.PrefixCache { return s.f.prefixes }

// PrefixKeyOf implements drama3.TakePrefixCacher.
func (s *TakeFrames) PrefixKeyOf(p drama3.Prompt) (drama3.PrefixKey, bool) { return s.f.PrefixKeyOf(p) }

// TakePrefix implements drama3.TakePrefixCacher.
func (s *TakeFrames) TakePrefix(id drama3.TakeID) (drama3.PrefixOutcome, bool) {
	v, err := s.view(id)
	if err != nil || s.f.prefixes == nil {
		return drama3.PrefixOutcome{}, false
	}
	return v.lastPrefix, true
}

// End implements drama3.TakeSet: the slot is free for the next take (its
// state is reset by that take's prefill).
func (s *TakeFrames) End(id drama3.TakeID) {
	slot, ok := s.live[id]
	if !ok {
		return
	}
	delete(s.live, id)
	s.slotLive[slot] = false // a frame of it in flight is dropped when it settles
	delete(s.made, slot)
	if v := s.slots[slot]; v != nil {
		v.begun = false
		if v.decoding != nil { // a chunk left on the codec: wait for it before the slot's next take
			v.DecodeCollect()
		}
	}
	s.free = append(s.free, slot)
	slices.SortFunc(s.free, func(a, b int) int { return b - a }) // lowest last
}

// Live is the takes live now.
func (s *TakeFrames) Live() int { return len(s.live) }

// Close implements drama3.TakeSet: the slots' views, then f (weights
// included).
func (s *TakeFrames) Close() error {
	if s.closed {
		return nil
	}
	s.settle()
	s.closed = true
	s.d.Do(func() error {
		for _, g := range s.graphs {
			g.Destroy()
		}
		for _, v := range s.slots {
			if v == nil {
				continue
			}
			for _, g := range []*Graph{v.first, v.next, v.ahead.next} {
				if g != nil {
					g.Destroy()
				}
			}
		}
		return nil
	})
	for _, v := range s.slots {
		if v == nil {
			continue
		}
		v.closed, v.begun = true, false
		if v.stream != nil {
			v.stream.Close()
		}
		if v.pinned != nil {
			s.d.Free(v.pinned)
		}
		v.ahead.free(s.d)
	}
	s.ahead.free(s.d)
	for _, b := range []*Block{s.pinned, s.rowHost} {
		if b != nil {
			s.d.Free(b)
		}
	}
	return s.f.Close()
}

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
	bb, err := f.bb.Sibling() // the first take's step choices
	if err != nil {
		return nil, fmt.Errorf("cuda frames: a take's backbone state: %w", err)
	}
	n := &Frames{d: f.d, bb: bb, codec: f.codec, opt: f.opt, semantic: f.semantic, endToken: f.endToken, borrowed: true,
		prefixes: f.prefixes} // the model's voice cache: a voice one take kept, another restores
	if err := n.build(); err != nil {
		return nil, fmt.Errorf("cuda frames: a take's state: %w", err)
	}
	return n, nil
}

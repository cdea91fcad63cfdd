//go:build cuda

package cuda

import (
	"slices"

	"proscenium/engine/drama3"
)

// Steps in flight for a TakeFrames. With Pipeline, each Step launches the
// next step of the takes it delivered before it returns (one in flight);
// with FramesOptions.Ahead2 (frame_ahead_cuda.go has the one-take form), a
// Step first launches the step after the one in flight, for each of its
// takes that goes on, and only then waits for the one in flight, by its
// event: the device holds the next step when one ends. A take that ended
// (or errs) in the step waited for has its row in the one launched after
// it; that row's state lies past the take's end and its result is dropped
// (the slot is not live when it settles, and the next take of the slot
// resets it). Two B-row steps in flight use two pinned buffers for their
// slots and results (parities 0 and 1), each with its own captured graphs
// and event; a take stepped alone uses its view's own two buffers
// (frameAhead) by its frame's parity. A take keeps at most two frames made
// and not yet delivered (one when it sits a Step out).

// takeStep is one launched step: its takes' slots in row order, and where
// its results land: a take stepped alone by its frame index (the view's
// buffer), a B-row step by its parity.
type takeStep struct {
	rows   []int
	frame  int // len(rows) == 1: the frame launched
	parity int // len(rows) > 1: the buffers of the step
}

// takesAhead is what Ahead2 adds to a TakeFrames.
type takesAhead struct {
	on      bool
	pinned  *Block // parity 1: every slot's control block after a step
	rowHost *Block // parity 1: the step's rows' slots
	done    eventPair
	p       int // the parity of the next B-row launch
}

// alloc makes parity 1's buffers (a tower of takes slots) and both events.
func (a *takesAhead) alloc(d *Device, takes int) error {
	var err error
	if a.pinned, err = d.AllocPinned(FrameRowsResultBytes(takes)); err != nil {
		return err
	}
	if a.rowHost, err = d.AllocPinned(4 * MaxStepRows); err != nil {
		return err
	}
	if err := a.done.make(d); err != nil {
		return err
	}
	a.on = true
	return nil
}

func (a *takesAhead) free(d *Device) {
	for _, b := range []*Block{a.pinned, a.rowHost} {
		if b != nil {
			d.Free(b)
		}
	}
	a.pinned, a.rowHost = nil, nil
	a.done.destroy(d)
	a.on = false
}

// depth is the steps a set keeps in flight.
func (a *takesAhead) depth() int {
	if a.on {
		return 2
	}
	return 1
}

// parity is the buffers of the next B-row launch: they alternate, so two
// steps in flight never share them.
func (a *takesAhead) parity() int {
	if !a.on {
		return 0
	}
	p := a.p
	a.p ^= 1
	return p
}

// record enqueues parity p's event after its step (inside Run).
func (a *takesAhead) record(q *Queue, p int) error {
	if !a.on {
		return nil
	}
	return a.done.record(q, p)
}

// rowsHost and resultRows are parity p's pinned buffers.
func (s *TakeFrames) rowsHost(p int) *Block {
	if p == 1 {
		return s.ahead.rowHost
	}
	return s.rowHost
}

func (s *TakeFrames) resultRows(p int) *Block {
	if p == 1 {
		return s.ahead.pinned
	}
	return s.pinned
}

// wait waits until the stream has passed step st: by its event under
// Ahead2 (the step after it may go on running), else the stream.
func (s *TakeFrames) wait(st takeStep) error {
	if len(st.rows) == 1 {
		return s.slots[st.rows[0]].waitFrame(st.frame)
	}
	if !s.ahead.on {
		return s.d.Sync()
	}
	return s.ahead.done.wait(s.d, st.parity)
}

// inFlight is the steps in flight that carry slot's take (at most two).
func (s *TakeFrames) inFlight(slot int) int {
	n := 0
	for _, st := range s.inflight {
		if slices.Contains(st.rows, slot) {
			n++
		}
	}
	return n
}

// nextFrame is the frame of slot's take a launch makes now: the frames
// delivered, then those made and waiting, then those in flight.
func (s *TakeFrames) nextFrame(slot int) int {
	return s.slots[slot].frame + len(s.made[slot]) + s.inFlight(slot)
}

// awaits reports whether a take frames asks for has no frame made yet but
// one in flight: Step must wait for the step that carries it.
func (s *TakeFrames) awaits(frames []drama3.TakeFrame) bool {
	for i := range frames {
		slot, ok := s.live[frames[i].ID]
		if ok && len(s.made[slot]) == 0 && s.inFlight(slot) > 0 {
			return true
		}
	}
	return false
}

// continuing is the takes of rows whose next frame may be launched ahead
// of what their last one holds: live, begun, below the context limit, and
// with no frame made and waiting for them (a take sitting Steps out keeps
// at most two).
func (s *TakeFrames) continuing(rows []int) []int {
	var next []int
	for _, slot := range rows {
		if s.slotLive[slot] && s.slots[slot].begun && len(s.made[slot]) == 0 &&
			s.f.bb.SlotLen(slot) < s.f.bb.Plan.Capacity {
			next = append(next, slot)
		}
	}
	return next
}

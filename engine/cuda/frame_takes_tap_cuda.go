//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/drama3"
)

// TakeLogitsTap receives a take's logits vectors of one frame: codebook 0
// the semantic head's, codebook j the residual head j's.
type TakeLogitsTap func(id drama3.TakeID, frame, codebook int, logits []float32)

// TapLogits has every frame's logits read back as the set makes it, for
// each take (debugging: a wait per step; nil stops). The set must not
// launch frames ahead (FramesOptions.Pipeline off): a frame's logits are
// read before the next one overwrites them.
func (s *TakeFrames) TapLogits(tap TakeLogitsTap) error {
	if tap != nil && s.f.opt.Pipeline {
		return fmt.Errorf("take set: tapping the logits needs the pipeline off")
	}
	s.tap = tap
	return nil
}

// TakeRoutesTap receives a take's routing of one backbone row (StepRoute a
// layer): a prompt row's (prompt; at its row in the prompt, whose prefill
// made frame 0) or a step's (at the frame the step made).
type TakeRoutesTap func(id drama3.TakeID, prompt bool, at int, layers []StepRoute)

// TapRoutes has every prefill pass's and every step's routing read back
// for each take it ran (debugging, as TapLogits: the pipeline off; nil
// stops). The backbone must keep its routing log (FramesOptions.KeepRoutes).
func (s *TakeFrames) TapRoutes(tap TakeRoutesTap) error {
	if tap != nil && s.f.opt.Pipeline {
		return fmt.Errorf("take set: tapping the routing needs the pipeline off")
	}
	if tap != nil && s.f.bb.routes == nil {
		return fmt.Errorf("take set: tapping the routing needs the backbone's routing log (FramesOptions.KeepRoutes)")
	}
	s.routeTap = tap
	return nil
}

// tapRoutes hands each take of a step of len(ids) rows its row's routing.
func (s *TakeFrames) tapRoutes(ids []drama3.TakeID, frames []int) error {
	if s.routeTap == nil {
		return nil
	}
	r, err := s.f.bb.StepRoutes(len(ids))
	if err != nil {
		return err
	}
	for k, id := range ids {
		s.routeTap(id, false, frames[k], r[k])
	}
	return nil
}

// tapJointRoutes hands each take of the joint prefill pass just enqueued
// its rows' routing: entry k's rows are the pass's next parts[k].Rows, its
// take's prompt's rows from its pass's first on.
func (s *TakeFrames) tapJointRoutes(entries []passEntry, parts []SlotRows) error {
	if s.routeTap == nil {
		return nil
	}
	r, err := s.f.bb.PassRoutes()
	if err != nil {
		return err
	}
	at := 0
	for k, e := range entries {
		for j := range parts[k].Rows {
			s.routeTap(e.tk.st.ID, true, e.pass.from+j, r[at+j])
		}
		at += len(parts[k].Rows)
	}
	return nil
}

// tapPromptRoutes hands the prompt rows of the prefill pass just enqueued,
// rows from on, to promptRoutes (where set).
func (f *Frames) tapPromptRoutes(from int) error {
	if f.promptRoutes == nil {
		return nil
	}
	r, err := f.bb.PassRoutes()
	if err != nil {
		return err
	}
	for j, layers := range r {
		f.promptRoutes(from+j, layers)
	}
	return nil
}

// tapRow hands row of t's logits (a frame graph's rows, or a slot view's
// one) to the tap as take id's frame.
func (s *TakeFrames) tapRow(id drama3.TakeID, frame int, t *Tower, row int) error {
	if s.tap == nil {
		return nil
	}
	e := s.f.entries
	sem := make([]float32, e[0]+1)
	if err := Download(s.d, sem, t.SemanticLogits(), int64(row)*int64(len(sem))*4); err != nil {
		return err
	}
	s.tap(id, frame, 0, sem)
	for j := 1; j < len(e); j++ {
		l := make([]float32, e[j])
		if err := Download(s.d, l, t.ResidualLogits(j), int64(row)*int64(e[j])*4); err != nil {
			return err
		}
		s.tap(id, frame, j, l)
	}
	return nil
}

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

// TakeRoutesTap receives a take's routing in the step that made its frame
// (StepRoute a backbone layer).
type TakeRoutesTap func(id drama3.TakeID, frame int, layers []StepRoute)

// TapRoutes has every step's routing read back for each take it stepped
// (debugging, as TapLogits: the pipeline off; nil stops). The backbone
// must keep its routing log (FramesOptions.KeepRoutes). A take's first
// frame comes from its prompt's prefill, which is not logged.
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
		s.routeTap(id, frames[k], r[k])
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

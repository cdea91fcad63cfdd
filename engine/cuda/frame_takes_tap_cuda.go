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

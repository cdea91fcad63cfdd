//go:build cuda

package cuda

import "time"

// PrefillWithout is a profile of where a prefill's time goes: the wall
// milliseconds of Prefill(rows) from an empty context with the parts in skip
// left out of every pass (skip 0: the whole prefill). The state it leaves is
// meaningless when skip is not 0: Reset afterwards.
func (b *Backbone) PrefillWithout(rows []BackboneRow, skip StepParts) (float64, error) {
	if err := b.Reset(); err != nil {
		return 0, err
	}
	b.skip = skip
	defer func() { b.skip = 0 }()
	start := time.Now()
	if _, err := b.Prefill(rows); err != nil {
		return 0, err
	}
	return float64(time.Since(start).Microseconds()) / 1000, nil
}

// attentionInBlocks runs attention layer L over the n rows of a prefill pass
// (NormedMix) in blocks of the layer's MaxRows, each block's output
// projected into its rows of MixOut: block b's rows sit at positions pos+s…
// (s its first row), so each block appends its keys and values to the cache
// and attends over everything before it, as the whole pass would. The
// position counter is advanced by each block and set back at the end (enqueue
// advances it by the pass).
func (b *Backbone) attentionInBlocks(q *Queue, L *backboneLayer, n int, pos Tensor, maxLen int) error {
	p := b.Plan
	nm, mix := b.t(p.NormedMix), b.t(p.MixOut)
	rowBytes := int64(p.H) * 4
	for s := 0; s < n; s += L.at.MaxRows {
		m := min(L.at.MaxRows, n-s)
		out := mix.At(int64(s) * rowBytes)
		o, err := q.attentionUpToOut(L.at, out, nm.At(int64(s)*rowBytes), m, pos, maxLen, nil)
		if err != nil {
			return err
		}
		if err := o.project(q, out, m); err != nil {
			return err
		}
		if err := q.AddInt32(pos, m); err != nil {
			return err
		}
	}
	return q.AddInt32(pos, -n)
}

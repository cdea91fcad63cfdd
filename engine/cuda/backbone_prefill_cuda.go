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

// mixerInBlocks runs layer L's mixer over the n rows of a prefill pass
// (NormedMix) in blocks of the plan's MixerRows, each block's output
// projected into its rows of MixOut: exactly what passes of that many rows
// ran. A block at row s of the pass sits at positions pos+s…: an attention
// block appends its keys and values to the cache and attends over
// everything before it, a DeltaNet block continues the layer's state
// through the chunked form (its chunks start where the CPU's do: blocks are
// multiples of the DeltaNet chunk). The position counter is advanced by
// each attention block and set back at the end (enqueue advances it by the
// pass).
func (b *Backbone) mixerInBlocks(q *Queue, L *backboneLayer, n int, pos Tensor, maxLen int) error {
	p := b.Plan
	nm, mix := b.t(p.NormedMix), b.t(p.MixOut)
	rowBytes := int64(p.H) * 4
	before := maxLen - n // rows cached before the pass
	blk := p.MixerRows()
	for s := 0; s < n; s += blk {
		m := min(blk, n-s)
		out, in := mix.At(int64(s)*rowBytes), nm.At(int64(s)*rowBytes)
		var o mixerOut
		var err error
		if L.dn != nil {
			// The chunked form whenever the prompt has more than one row so
			// far (Backbone.mixer).
			o, err = q.deltaNetCore(L.dn, out, in, m, m > 1 || before+s > 0, nil)
		} else {
			o, err = q.attentionUpToOut(L.at, out, in, m, pos, maxLen, nil)
		}
		if err != nil {
			return err
		}
		if err := o.project(q, out, m); err != nil {
			return err
		}
		if L.at != nil {
			if err := q.AddInt32(pos, m); err != nil {
				return err
			}
		}
	}
	if L.at == nil {
		return nil
	}
	return q.AddInt32(pos, -n)
}

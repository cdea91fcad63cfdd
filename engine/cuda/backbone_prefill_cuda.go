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

// uploadBlockPos writes the first position of each mixer block of a pass of
// n rows starting at b.pos into the plan's BlockPos (nothing for a pass of
// one block). The host writes them: a block's attention reads its position
// from there, not from the position counter advanced on the device between
// blocks, which the H200 runs showed the next block's kernels could read
// stale (rows from the 65th of a 256-row pass missed the CPU by 0.15, and
// the same pass without blocks matched it bit for bit; docs/PERF.md
// "Prefill on tensor cores").
func (b *Backbone) uploadBlockPos(n int) error {
	blk := b.Plan.MixerRows()
	if n <= blk {
		return nil
	}
	var at []int32
	for s := 0; s < n; s += blk {
		at = append(at, int32(b.pos+s))
	}
	return Upload(b.d, b.work, b.Plan.BlockPos, at)
}

// mixerInBlocks runs layer L's mixer over the n rows of a prefill pass
// (NormedMix) in blocks of the plan's MixerRows, each block's output
// projected into its rows of MixOut: exactly what passes of that many rows
// ran. Block k at row s of the pass sits at positions pos+s… (BlockPos[k],
// uploadBlockPos): an attention block appends its keys and values to the
// cache and attends over everything before it, a DeltaNet block continues
// the layer's state through the chunked form (its chunks start where the
// CPU's do: blocks are multiples of the DeltaNet chunk).
func (b *Backbone) mixerInBlocks(q *Queue, L *backboneLayer, n int, maxLen int) error {
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
			o, err = q.attentionUpToOut(L.at, out, in, m, b.t(p.BlockPos+int64(4*(s/blk))), maxLen, nil)
		}
		if err != nil {
			return err
		}
		if err := o.project(q, out, m); err != nil {
			return err
		}
	}
	return nil
}

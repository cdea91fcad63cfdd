//go:build cuda

package cuda

import "fmt"

// A split prefill pass: two passes of one slot's rows — rows[:cut], then
// rows[cut:] — enqueued layer by layer (layer i of the first part, then
// layer i of the second) instead of one pass after the other. Each part
// runs on its own rows of the pass's scratch with the kernels its own pass
// would launch, so every row's result is the two passes' bit for bit, under
// either numerics policy. What changes is the order of the reads: under a
// host tier a pass copies each host layer's experts onto the stage
// (Backbone.moe), and the second part finds the layer there, so the prompt
// carries the host experts over the bus once instead of twice. A take in a
// voice the cache does not hold runs its voice prefix's last pass and its
// script so (Frames.BeginPrompt): at a 22 GiB cap it carried 15.3 GB
// instead of 30.6, and a first take in a new 10 s voice began in 409 ms
// instead of 682 (an H100, docs/PERF.md session 38).
// Between the parts of each layer a caller may enqueue work of its own: the
// voice cache's copy of the layer's DeltaNet state after the prefix, which
// the second part goes on to change.

// SplitFits says whether n rows cut after row cut run as one split pass:
// each part at least two rows (a one-row part would be a step's kernels),
// the rows one pass's (Plan.Chunk), the parts' attention blocks within the
// plan's BlockPos entries, no routing log (it logs a pass's rows as one
// part) and no profile's skipped parts.
func (b *Backbone) SplitFits(cut, n int) bool {
	p := b.Plan
	return cut >= 2 && n-cut >= 2 && n <= p.Chunk && b.splitAllowed() &&
		len(b.blockPos(cut))+p.JointBlocks(n-cut) <= p.JointBlockLimit()
}

// splitAllowed says whether a pass may run split: not while the routing is
// logged (the log takes a pass's rows as one part) or a profile skips
// parts of the forward.
func (b *Backbone) splitAllowed() bool { return b.routes == nil && b.skip == 0 }

// splitPays says whether a voice prefix's last pass and the script (or the
// scripts of takes begun together) after it run as one split pass: under
// a host tier, where every pass carries the host layers' experts over the
// bus (a stage), unless SplitPrefix is off or a split is not allowed.
func (b *Backbone) splitPays() bool { return SplitPrefix && b.W.Stage != nil && b.splitAllowed() }

// PrefillSplit appends rows to the slot in use as the passes of rows[:cut]
// and rows[cut:] would, as one split pass (the file's comment; SplitFits
// must hold). between, when not nil, is enqueued after the first part of
// each layer i and before its second. The final-norm hidden states of
// every row are left at Plan.Out, in order, as one pass of all the rows
// leaves them. A bad row changes nothing.
func (b *Backbone) PrefillSplit(rows []BackboneRow, cut int, between func(q *Queue, layer int) error) error {
	n := len(rows)
	if !b.SplitFits(cut, n) {
		return fmt.Errorf("backbone: a split pass of %d rows cut after %d does not fit one pass of %d rows", n, cut, b.Plan.Chunk)
	}
	toks, emb, err := b.passInputs(rows)
	if err != nil {
		return err
	}
	// The first part's attention blocks as its own pass writes them (none
	// for one block: it reads the slot's position counter), then the
	// second's, always written: the counter still says the first part's
	// start when the second part's layers run (it advances after both).
	at := b.blockPos(cut)
	first := len(at)
	for s := 0; s < n-cut; s += b.Plan.MixerRows() {
		at = append(at, int32(b.pos+cut+s))
	}
	pos := b.pos
	err = b.d.Run(func(q *Queue) error {
		if err := b.copyPassInputs(q, toks, emb, n, at); err != nil {
			return err
		}
		return b.inPass(n, func() error { return b.enqueueSplit(q, cut, n, pos, first, between) })
	})
	if err != nil {
		return err
	}
	b.pos += n
	return nil
}

// enqueueSplit is the forward of a split pass of n rows cut after cut,
// starting at position pos, whose second part's attention blocks start at
// BlockPos entry block.
func (b *Backbone) enqueueSplit(q *Queue, cut, n, pos, block int, between func(q *Queue, layer int) error) error {
	one, two := b.rowsView(0, 0), b.rowsView(cut, block)
	eps, err := one.enqueueEntry(q, cut)
	if err != nil {
		return err
	}
	if _, err := two.enqueueEntry(q, n-cut); err != nil {
		return err
	}
	counter := b.posTensor()
	// The second part's first position: its first BlockPos entry (a part
	// of one block reads its position there as a pass reads the counter).
	secondPos := two.t(two.Plan.BlockPos)
	for i := range b.layers {
		if err := one.layerForward(q, i, cut, counter, pos+cut, eps, false, false); err != nil {
			return err
		}
		if between != nil {
			if err := between(q, i); err != nil {
				return fmt.Errorf("layer %d: %w", i, err)
			}
		}
		if err := two.layerForward(q, i, n-cut, secondPos, pos+n, eps, false, false); err != nil {
			return err
		}
	}
	return q.AddInt32(counter, n)
}

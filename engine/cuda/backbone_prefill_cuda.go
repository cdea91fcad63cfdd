//go:build cuda

package cuda

import (
	"fmt"
	"time"
	"unsafe"

	"gorgonia.org/cu"
)

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
	if err := firstErr(b.PrefillOnDevice(rows), b.d.Sync()); err != nil {
		return 0, err
	}
	return float64(time.Since(start).Microseconds()) / 1000, nil
}

// PrefillDeviceMS is the device milliseconds of one prefill pass of rows
// from an empty context (at most Plan.Chunk rows): events around its
// launches, the host's copies before them left out. Beside PrefillWithout's
// wall time it says how much of a prefill the host adds.
func (b *Backbone) PrefillDeviceMS(rows []BackboneRow) (float64, error) {
	if len(rows) > b.Plan.Chunk {
		return 0, fmt.Errorf("backbone: a timed pass of %d rows is more than one pass of %d", len(rows), b.Plan.Chunk)
	}
	if err := b.Reset(); err != nil {
		return 0, err
	}
	toks, emb, err := b.passInputs(rows)
	if err != nil {
		return 0, err
	}
	n := len(rows)
	if err := b.uploadPass(toks, emb, n); err != nil {
		return 0, err
	}
	ms, err := b.d.Time(func(q *Queue) error { return b.inPass(n, func() error { return b.enqueue(q, n, n) }) })
	if err != nil {
		return 0, err
	}
	b.pos += n
	return ms, nil
}

// blockPos is the first position of each attention block of a pass of n
// rows starting at b.pos, which copyPassInputs writes into the plan's
// BlockPos (nil for a pass of one block). The host writes them: a block's
// attention reads its position from there, not from the position counter
// advanced on the device between blocks, which the H200 runs showed the
// next block's kernels could read stale (rows from the 65th of a 256-row
// pass missed the CPU by 0.15, and the same pass without blocks matched it
// bit for bit; docs/PERF.md "Prefill on tensor cores").
func (b *Backbone) blockPos(n int) []int32 {
	blk := b.Plan.MixerRows()
	if n <= blk {
		return nil
	}
	var at []int32
	for s := 0; s < n; s += blk {
		at = append(at, int32(b.pos+s))
	}
	return at
}

// copyPassInputs enqueues on q's stream, ahead of a pass's kernels, the
// copies of its n tokens, its embedding rows' span (toks −1; none for a
// pass of tokens) and its attention blocks' positions (at: blockPos, or a
// split pass's), without
// Upload's synchronisations and device-thread round trips: the copies are
// ordered with the kernels on the stream, and from pageable memory each
// returns once its bytes are staged, so toks and emb may change after it.
// On the device thread.
func (b *Backbone) copyPassInputs(q *Queue, toks []int32, emb []float32, n int, at []int32) error {
	s := q.Stream()
	put := func(off int64, src unsafe.Pointer, bytes int64, what string) error {
		if err := checkFits(b.work, off, bytes, what); err != nil {
			return err
		}
		return cu.MemcpyHtoDAsync(cu.DevicePtr(b.work.Ptr+uintptr(off)), src, bytes, s)
	}
	if err := put(b.Plan.Toks, unsafe.Pointer(&toks[0]), int64(n)*4, "prefill tokens"); err != nil {
		return err
	}
	H := b.Plan.H
	if first, end := embeddingSpan(toks[:n]); end > first {
		if err := put(b.Plan.Emb+int64(first*H*4), unsafe.Pointer(&emb[first*H]), int64((end-first)*H)*4, "prefill embeddings"); err != nil {
			return err
		}
	}
	if at != nil {
		return put(b.Plan.BlockPos, unsafe.Pointer(&at[0]), int64(len(at))*4, "prefill block positions")
	}
	return nil
}

// uploadPass copies a pass's inputs (copyPassInputs) in a Run of its own,
// ahead of the work enqueued after it.
func (b *Backbone) uploadPass(toks []int32, emb []float32, n int) error {
	return b.d.Run(func(q *Queue) error { return b.copyPassInputs(q, toks, emb, n, b.blockPos(n)) })
}

// attentionPos is the positions an attention layer's core reads for a pass
// of n rows: the position counter pos when the pass is one core block, else
// the blocks' host-written first positions (blockPos; block k at row
// k·MixerRows of the pass appends its keys and values to the cache and
// attends over everything before it, Queue.attentionBlocks). The pass's
// q/k/v and output projections take all its rows at once either way, and
// the DeltaNet layers run the whole pass in one call.
func (b *Backbone) attentionPos(pos Tensor, n int) Tensor {
	if n <= b.Plan.MixerRows() {
		return pos
	}
	return b.t(b.Plan.BlockPos)
}

// passMixer enqueues layer L's mixer over the n rows of NormedMix up to its
// output projection (which it returns, into MixOut): a DeltaNet layer over
// all n rows in one call, an attention layer with its core in blocks of
// MixerRows at the positions in pos (attentionPos). With heads (the fused
// step's counters) a one-row step runs its fused kernels; with dec (the same
// counters) a one-row step's attention may run as one launch
// (attentionDecode).
func (b *Backbone) passMixer(q *Queue, L *backboneLayer, n int, pos Tensor, maxLen int, heads, dec *Block) (mixerOut, error) {
	nm, mix := b.t(b.Plan.NormedMix), b.t(b.Plan.MixOut)
	if L.dn != nil {
		// A prefill pass after the first (maxLen > n: rows cached)
		// continues a prompt of more than one row, which the CPU runs
		// through the chunked form even where the pass has one row
		// (engine/cpu prefillChunks).
		return q.deltaNetCore(L.dn, mix, nm, n, n > 1 || maxLen > n, heads)
	}
	return q.attentionUpToOut(L.at, mix, nm, n, pos, maxLen, heads, dec)
}

// mixerInBlocks runs layer L's mixer over the n rows of a prefill pass
// (NormedMix) into MixOut, output projection included, its attention
// blocks at the positions in BlockPos (blockPos, or a joint pass's
// own): what Backbone.mixer runs for a pass, for callers that lay out the
// pass themselves.
func (b *Backbone) mixerInBlocks(q *Queue, L *backboneLayer, n int, maxLen int) error {
	o, err := b.passMixer(q, L, n, b.t(b.Plan.BlockPos), maxLen, nil, nil)
	if err != nil {
		return err
	}
	return o.project(q, b.t(b.Plan.MixOut), n)
}

// rowsView is b seen from row at of a pass: the rows a forward carries
// from layer to layer or reads and writes by row (X, the two norms' outputs,
// the mixer's output, the final norm's Out, the inputs Toks and Emb) start
// at that row, and its BlockPos entries at entry block, so a forward, or a
// mixer (mixerInBlocks), of the view runs rows at… as a pass of them alone
// would: a joint pass's take (PrefillSlots) and a split pass's second part
// (PrefillSplit). The scratch a layer uses and leaves (projections,
// routing, experts) stays where it is: the views' work runs one after the
// other on the stream. The view only enqueues; it holds nothing of its own.
func (b *Backbone) rowsView(at, block int) *Backbone {
	v := *b
	p := *b.Plan
	rows, hp := int64(at), int64(p.Hp)
	row := int64(p.H) * 4
	p.X += rows * row
	p.NormedMix += rows * row
	p.MixOut += rows * row
	p.Out += rows * row
	p.Emb += rows * row
	p.NormedMoE += rows * hp * 4
	p.Toks += rows * 4
	p.BlockPos += 4 * int64(block)
	v.Plan = &p
	return &v
}

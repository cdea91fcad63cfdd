//go:build cuda

package cuda

import (
	"fmt"
	"math"

	"proscenium/engine/cuda/kernel"
)

// decodeApplies reports whether a step of n rows (one take's, or the n
// takes' of a B-row step) runs its attention core as attentionDecode: fast
// numerics, attnDecode (the default; $PROSCENIUM_GPU_ATTN_DECODE=0 not), counters given (the step's), a
// geometry the kernel takes and partials the layer's scratch holds. Exact
// keeps the four kernels, which give the CPU's bits.
func (q *Queue) decodeApplies(l *AttentionLayer, n int, counters *Block) bool {
	return attnDecode && counters != nil && n >= 1 && n <= MaxStepRows && !q.d.Numerics.Exact() && l.decodeFits(n)
}

// decodeFits reports whether the layer's scratch holds the partials of n
// rows (they lie in the core's partials region, up to the gated output).
func (l *AttentionLayer) decodeFits(n int) bool {
	if !l.G.decodeSupports() {
		return false
	}
	sl := l.G.scratchLayoutBlocks(l.MaxRows, l.coreRows(), l.Capacity)
	return l.G.decodePartBytes(n, l.Capacity) <= sl.attn-sl.part && n <= l.MaxRows
}

// attentionDecode is the attention core of a step's n projected rows (at
// the start of the scratch, [n, ProjWidth]) in one launch of
// attn_decode_fast (kernels/attention_decode.cu): each row's queries and new
// key normed and rotated at its position, the key and value appended to its
// cache, attention over the cache and the new row split over blocks whose
// partials the last block merges, the gated output into the attn region.
// With slots (a B-row step) row b is the take in slot slots[b], its
// position s.pos[slots[b]] and its cache s.stride floats per slot from the
// layer's; without (one take) the row's position is the int32 at pos and
// its cache the layer's. counters holds decodeCounters(n) zero uint32s,
// left zero. ahead runs attn_decode_ahead_fast, which reads the rows' slots
// and positions and their first chunk's cached keys and values before its
// PDL wait: the caller promises the launch before is a q/k/v projection
// that lets it start only after its own wait (attnInWaited), so everything
// those reads see was written by kernels that have finished.
func (q *Queue) attentionDecode(l *AttentionLayer, n int, pos Tensor, s *stepSlots, counters *Block, ahead bool) error {
	g := l.G
	switch {
	case q.d.Numerics.Exact():
		return fmt.Errorf("cuda attention: the one-launch decode runs under fast numerics only")
	case !g.decodeSupports():
		return fmt.Errorf("cuda attention: the one-launch decode takes head dims that are multiples of 4 up to %d, not %d", decodeMaxHeadDim, g.HeadDim)
	case n < 1 || n > MaxStepRows:
		return fmt.Errorf("cuda attention: a one-launch decode of %d rows (1…%d)", n, MaxStepRows)
	case !l.decodeFits(n):
		return fmt.Errorf("cuda attention: the partials of a %d-row decode exceed the layer's scratch", n)
	}
	if err := checkFits(counters, 0, int64(4*g.decodeCounters(n)), "attention decode counters"); err != nil {
		return err
	}
	r := l.regions()
	w := l.W
	a := kernel.AttnDecodeFastArgs{
		Attn: tPtr(r.attn), Part: tPtr(r.part), Counters: devPtr(counters), Kc: tPtr(r.kc), Vc: tPtr(r.vc),
		Proj: tPtr(r.proj), Qnorm: tPtr(w.QNorm), Knorm: tPtr(w.KNorm), Posp: tPtr(pos),
		Capacity: l.Capacity, Nh: g.Heads, Nkv: g.KVHeads, Hd: g.HeadDim, Rot: g.RotaryDim, Theta: g.ropeTheta(),
		Eps: g.Eps, Scale: float32(1 / math.Sqrt(float64(g.HeadDim))), Splits: g.decodeGridSplits(n, l.Capacity),
	}
	if s != nil {
		a.Posp, a.Slots, a.SlotStride = tPtr(s.pos), tPtr(s.slots), s.stride
	} else if n != 1 {
		return fmt.Errorf("cuda attention: a one-launch decode of %d rows without their slots", n)
	}
	grid := [3]int{a.Splits, g.decodeBlocksY(), n}
	if ahead {
		return kernel.AttnDecodeAheadFast(q, grid, decodeThreads, kernel.AttnDecodeAheadFastArgs(a))
	}
	return kernel.AttnDecodeFast(q, grid, decodeThreads, a)
}

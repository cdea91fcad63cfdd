//go:build cuda

package cuda

import (
	"fmt"
	"math"

	"proscenium/engine/cuda/kernel"
)

// flashApplies reports whether a call of n rows runs its attention core as
// attentionFlash: fast numerics, more than one row (a step keeps its
// captured split kernels), no fused-step counters, a geometry the kernel
// takes, and $PROSCENIUM_GPU_ATTN_FLASH not 0. Exact keeps the core blocks,
// which give the CPU's bits.
func (q *Queue) flashApplies(l *AttentionLayer, n int, counters *Block) bool {
	return attnFlash && n > 1 && counters == nil && !q.d.Numerics.Exact() && l.G.flashSupports()
}

// attentionFlash is the attention core of the n projected rows at the start
// of the scratch, flash-style (kernels/attention_prompt.cu): attn_prep norms
// and rotates every row's queries into the flash query region and appends
// the rows' keys and values to the cache at pos (the int32 at pos: the rows
// cached before the call; a pass's BlockPos holds it first), then
// attn_flash_fast attends each row over the cache up to itself and writes
// the gated output to the attn region — split over splits key ranges whose
// partials attn_flash_combine_fast merges when splits > 1. maxLen bounds the
// rows cached after the call (0: the capacity) and sets the splits.
func (q *Queue) attentionFlash(l *AttentionLayer, n int, pos Tensor, maxLen int) error {
	if maxLen <= 0 || maxLen > l.Capacity {
		maxLen = l.Capacity
	}
	// attn_flash2_fast's ≈ 107 KiB of shared memory a block exceeds what
	// some devices give one (sm_86/89: 99 KiB): those keep attn_flash_fast.
	if useFlash2(n) && q.Queue.SharedLimit("attn_flash2_fast", l.G.flash2Smem()) == nil {
		return q.attentionFlashKernel(l, n, pos, l.G.flash2Splits(n, maxLen), true)
	}
	return q.attentionFlashSplits(l, n, pos, l.G.flashSplits(n, maxLen))
}

// attentionFlashSplits is attentionFlash with its key splits given (the
// tests run every call at one split and at the most, whatever its length).
func (q *Queue) attentionFlashSplits(l *AttentionLayer, n int, pos Tensor, splits int) error {
	return q.attentionFlashKernel(l, n, pos, splits, useFlash2(n))
}

// attentionFlashKernel is attentionFlashSplits with the kernel given:
// attn_flash2_fast (attn13's register tiles) where v2, else
// attn_flash_fast (the tests and the timing run both in one process).
func (q *Queue) attentionFlashKernel(l *AttentionLayer, n int, pos Tensor, splits int, v2 bool) error {
	g := l.G
	switch {
	case q.d.Numerics.Exact():
		return fmt.Errorf("cuda attention: the flash core runs under fast numerics only")
	case !g.flashSupports():
		return fmt.Errorf("cuda attention: the flash core takes head dims that are multiples of 4 up to %d, not %d", flashMaxHeadDim, g.HeadDim)
	case n < 1 || n > l.MaxRows:
		return fmt.Errorf("cuda attention: a flash core of %d rows (the scratch holds %d)", n, l.MaxRows)
	case splits < 1 || splits > flashMaxSplits:
		return fmt.Errorf("cuda attention: %d flash splits (1…%d)", splits, flashMaxSplits)
	case splits > 1 && int64(n*g.Heads*splits)*int64(flashPartHead+g.HeadDim) > g.flashPartFloats(l.MaxRows, l.Capacity):
		return fmt.Errorf("cuda attention: %d rows in %d flash splits exceed the partials' scratch", n, splits)
	}
	nh, nkv, hd := g.Heads, g.KVHeads, g.HeadDim
	pw := g.ProjWidth()
	r := l.regions()
	w := l.W
	if err := kernel.AttnPrep(q, kernel.Fast, [3]int{n, nh + nkv, 1}, attnThreads, tPtr(r.flashQn), tPtr(r.kc), tPtr(r.vc), tPtr(r.proj),
		tPtr(w.QNorm), tPtr(w.KNorm), tPtr(pos), l.Capacity, nh, nkv, hd, g.RotaryDim, g.ropeTheta(), g.Eps); err != nil {
		return err
	}
	scale := float32(1 / math.Sqrt(float64(hd)))
	if v2 {
		err := kernel.AttnFlash2Fast(sharedLauncher{q, g.flash2Smem()}, [3]int{g.flash2Tiles(n), nkv, splits}, flash2Threads,
			kernel.AttnFlash2FastArgs{
				Attn: tPtr(r.attn), Part: tPtr(r.flashPart), Qn: tPtr(r.flashQn), Kc: tPtr(r.kc), Vc: tPtr(r.vc), Proj: tPtr(r.proj),
				Posp: tPtr(pos), N: n, Capacity: l.Capacity, Nh: nh, Nkv: nkv, Hd: hd, Pw: pw, Splits: splits, Scale: scale,
			})
		if err != nil {
			return err
		}
	} else if err := kernel.AttnFlashFast(q, [3]int{g.flashTiles(n), nkv, splits}, flashThreads, kernel.AttnFlashFastArgs{
		Attn: tPtr(r.attn), Part: tPtr(r.flashPart), Qn: tPtr(r.flashQn), Kc: tPtr(r.kc), Vc: tPtr(r.vc), Proj: tPtr(r.proj),
		Posp: tPtr(pos), N: n, Capacity: l.Capacity, Nh: nh, Nkv: nkv, Hd: hd, Pw: pw, Splits: splits, Scale: scale,
	}); err != nil {
		return err
	}
	if splits == 1 {
		return nil
	}
	return kernel.AttnFlashCombineFast(q, [3]int{n * nh, 1, 1}, flashThreads, tPtr(r.attn), tPtr(r.flashPart), tPtr(r.proj), tPtr(pos),
		l.Capacity, nh, hd, pw, splits)
}

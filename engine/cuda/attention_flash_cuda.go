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
	if err := AttnMMASetting(attnMMA); err != nil {
		return err
	}
	core := q.flashCoreFor(l, n)
	return q.attentionFlashKernel(l, n, pos, maxLen, l.G.coreSplits(core, n, maxLen), core)
}

// flashCoreFor is the kernel a pass of n rows runs: the tensor cores where
// the switch, the geometry and the device take them, else attn_flash2_fast
// where the pass is long enough and the device gives its ≈ 107 KiB of shared
// memory a block (sm_86/89 give 99 KiB), else attn_flash_fast.
func (q *Queue) flashCoreFor(l *AttentionLayer, n int) flashCore {
	if useFlashMMA(n) {
		core := coreFlashMMA
		if attnMMA == "k32" {
			core = coreFlashMMAK32
		}
		if k, _, smem, ok := l.G.flashMMAKernel(core); ok && q.Queue.SharedLimit(string(k), smem) == nil {
			return core
		}
	}
	if useFlash2(n) && q.Queue.SharedLimit("attn_flash2_fast", l.G.flash2Smem()) == nil {
		return coreFlash2
	}
	return coreFlash
}

// coreSplits is the key splits of a call of core over n rows whose last row
// sees at most maxLen keys.
func (g AttentionGeometry) coreSplits(core flashCore, n, maxLen int) int {
	switch core {
	case coreFlashMMA, coreFlashMMAK32:
		return g.flashMMASplits(n, maxLen)
	case coreFlash2:
		return g.flash2Splits(n, maxLen)
	}
	return g.flashSplits(n, maxLen)
}

// attentionFlashKernel is attentionFlash with the kernel and its key splits
// given (the tests run every kernel at one split and at the most, whatever
// the pass's length; the timing runs them side by side in one process).
// maxLen bounds the rows cached after the call (0: the capacity).
func (q *Queue) attentionFlashKernel(l *AttentionLayer, n int, pos Tensor, maxLen, splits int, core flashCore) error {
	g := l.G
	mma, mmaHD, mmaSmem, mmaOK := g.flashMMAKernel(core)
	switch {
	case q.d.Numerics.Exact():
		return fmt.Errorf("cuda attention: the flash core runs under fast numerics only")
	case !g.flashSupports():
		return fmt.Errorf("cuda attention: the flash core takes head dims that are multiples of 4 up to %d, not %d", flashMaxHeadDim, g.HeadDim)
	case core.mma() && !mmaOK:
		return fmt.Errorf("cuda attention: the tensor-core flash core takes head dims that are multiples of 8 up to 256, not %d", g.HeadDim)
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
	if err := l.prep(q, kernel.Fast, r.flashQn, r.proj, pos, n); err != nil {
		return err
	}
	scale := float32(1 / math.Sqrt(float64(hd)))
	var err error
	switch core {
	case coreFlashMMA, coreFlashMMAK32:
		// The parts of the pass's queries and of every key up to its last
		// (maxKeys bounds the rows cached after the call), then the core.
		keys, maxKeys := flashMMAKeys(l.Capacity), l.Capacity
		if maxLen > 0 {
			maxKeys = min(maxKeys, maxLen)
		}
		ktiles := (maxKeys + kernel.FmmaBk - 1) / kernel.FmmaBk
		qblocks := (n*nh + kernel.FmmaPartsBq - 1) / kernel.FmmaPartsBq
		err = kernel.AttnMmaPartsFast(q, [3]int{ktiles*nkv + qblocks, 1, 1}, kernel.FmmaPartsThreads, kernel.AttnMmaPartsFastArgs{
			Qp: tPtr(r.mmaQp), Qinv: tPtr(r.mmaQinv), Kp: tPtr(r.mmaKp), Vp: tPtr(r.mmaVp), Kinv: tPtr(r.mmaKinv), Vexp: tPtr(r.mmaVexp),
			Qn: tPtr(r.flashQn), Kc: tPtr(r.kc), Vc: tPtr(r.vc), Posp: tPtr(pos), N: n, Keys: keys, Ktiles: ktiles, Nh: nh, Nkv: nkv,
			Hd: hd, Hdp: mmaHD, Scale: scale,
		})
		if err == nil {
			err = kernel.AttnFlashMmaFast(sharedLauncher{q, mmaSmem}, mma, [3]int{g.flashMMATiles(n), nkv, splits}, flashMMAThreads,
				kernel.AttnFlashMmaFastArgs{
					Attn: tPtr(r.attn), Part: tPtr(r.flashPart), Qp: tPtr(r.mmaQp), Qinv: tPtr(r.mmaQinv), Kp: tPtr(r.mmaKp),
					Vp: tPtr(r.mmaVp), Kinv: tPtr(r.mmaKinv), Vexp: tPtr(r.mmaVexp), Proj: tPtr(r.proj), Posp: tPtr(pos),
					N: n, Keys: keys, Capacity: l.Capacity, Nh: nh, Nkv: nkv, Hd: hd, Pw: pw, Splits: splits,
				})
		}
	case coreFlash2:
		err = kernel.AttnFlash2Fast(sharedLauncher{q, g.flash2Smem()}, [3]int{g.flash2Tiles(n), nkv, splits}, flash2Threads,
			kernel.AttnFlash2FastArgs{
				Attn: tPtr(r.attn), Part: tPtr(r.flashPart), Qn: tPtr(r.flashQn), Kc: tPtr(r.kc), Vc: tPtr(r.vc), Proj: tPtr(r.proj),
				Posp: tPtr(pos), N: n, Capacity: l.Capacity, Nh: nh, Nkv: nkv, Hd: hd, Pw: pw, Splits: splits, Scale: scale,
			})
	default:
		err = kernel.AttnFlashFast(q, [3]int{g.flashTiles(n), nkv, splits}, flashThreads, kernel.AttnFlashFastArgs{
			Attn: tPtr(r.attn), Part: tPtr(r.flashPart), Qn: tPtr(r.flashQn), Kc: tPtr(r.kc), Vc: tPtr(r.vc), Proj: tPtr(r.proj),
			Posp: tPtr(pos), N: n, Capacity: l.Capacity, Nh: nh, Nkv: nkv, Hd: hd, Pw: pw, Splits: splits, Scale: scale,
		})
	}
	if err != nil || splits == 1 {
		return err
	}
	return kernel.AttnFlashCombineFast(q, [3]int{(n*nh + flashWarps - 1) / flashWarps, 1, 1}, flashThreads, tPtr(r.attn), tPtr(r.flashPart),
		tPtr(r.proj), tPtr(pos), n*nh, l.Capacity, nh, hd, pw, splits)
}

package cuda

import (
	"fmt"
	"os"

	"proscenium/engine/cuda/kernel"
)

// This file sizes the flash-style prompt attention (kernels/attention_prompt.cu
// attn_flash_fast, Queue.attentionFlash): under fast numerics a prefill
// pass's attention core runs over all its rows in one launch after
// attn_prep, instead of core blocks of four launches each (the scores of
// every row written out, then float64 partials and their combine). A
// block takes flashBQ (row, head) query vectors of one KV head and stages
// that head's keys and values flashBK rows at a time in shared memory, the
// softmax online; a pass too short to give the device blocks enough splits
// its keys (each split's partial merged by attn_flash_combine_fast).

const (
	flashThreads   = kernel.FlashThreads
	flashWarps     = kernel.FlashWarps
	flashBQ        = kernel.FlashBq
	flashMaxSplits = kernel.FlashMaxSplits
	// flashPartHead is a partial's floats before its head dims: m and l,
	// padded so each partial's output starts 16-byte aligned.
	flashPartHead = kernel.FlashPartHead
	// flashMaxHeadDim is the most head dims the kernel's lanes hold (four
	// per float4, FLASH_MAXD4 float4s a lane).
	flashMaxHeadDim = 128 * kernel.FlashMaxd4
	// flashTargetBlocks is the blocks a pass should give the device: two
	// per multiprocessor of an H200 (132), so that the causal pass's
	// shorter tiles finish while the longer ones run.
	flashTargetBlocks = 2 * 132
	// flashMinSplitKeys is the fewest keys a split takes on average: a few
	// shared-memory tiles, so a split's staging and its partial stay a
	// small part of its work.
	flashMinSplitKeys = 4 * kernel.FlashBk
)

// The register-tiled kernel's sizes (attn13: kernels/attention_prompt.cu
// attn_flash2_fast): flash2BQ query vectors a block, keys in tiles of
// flash2BK, two blocks an SM (its dynamic shared memory: flash2Smem).
const (
	flash2Threads = kernel.Flash2Threads
	flash2BQ      = kernel.Flash2Bq
	// flash2TargetBlocks: two blocks on each of an H200's 132 SMs.
	flash2TargetBlocks = 2 * 132
	// flash2MinSplitKeys is the fewest keys a split takes on average: one
	// tile (a split is whole tiles, so a short one wastes no keys; its
	// fixed cost, the queries staged and the partial written and combined,
	// is ≈ a tile's).
	flash2MinSplitKeys = kernel.Flash2Bk
)

// attnFlash2 is whether the flash core may run attn_flash2_fast (attn13)
// rather than attn_flash_fast: unless $PROSCENIUM_GPU_ATTN_FLASH=1, for
// passes of flash2MinRows rows or more (=2: every pass).
var attnFlash2 = os.Getenv("PROSCENIUM_GPU_ATTN_FLASH") != "1"

// attnFlash2Always is $PROSCENIUM_GPU_ATTN_FLASH=2: attn_flash2_fast for
// passes of any length (the tests and measurements).
var attnFlash2Always = os.Getenv("PROSCENIUM_GPU_ATTN_FLASH") == "2"

// flash2MinRows is the shortest pass attn_flash2_fast takes by default.
// Session 13's run 4 on the H200 (TestAttentionFlashTiming, µs a layer,
// attn_flash_fast → attn_flash2_fast): 60 rows 38.4 → 50.1 (its 64-query
// blocks mostly empty), 300 rows 137.0 → 106.6, 512 244.3 → 212.1, 700 348.9
// → 315.2, 1024 729.0 → 612.8, 300 after 700 cached 446.5 → 310.0; 60 after
// 700 82.4 → 72.1 (a cached voice's script keeps attn_flash_fast: 10 µs a
// layer).
const flash2MinRows = 128

// useFlash2 says whether a pass of n rows runs attn_flash2_fast.
func useFlash2(n int) bool {
	return attnFlash2Always || attnFlash2 && n >= flash2MinRows
}

// The tensor-core kernels' sizes (mma17: kernels/attention_prompt.cu
// attn_mma_parts_fast, attn_flash_mma_fast_hd*): flashMMABQ query vectors a
// block in four m16 warps, keys in tiles of kernel.FmmaBk (one block an SM:
// 132 KiB of shared memory at head dim 256) or, at head dim 256 by default,
// of 16 (99 KiB, two blocks an SM).
const (
	flashMMAThreads = kernel.FmmaThreads
	flashMMABQ      = kernel.FmmaBq
	// flashMMATargetBlocks: two blocks' work for each of an H200's 132 SMs,
	// so that the causal pass's shorter blocks finish while longer ones run.
	flashMMATargetBlocks = 2 * 132
	// flashMMAMinSplitKeys: a split is whole tiles (attn_flash2_fast's rule).
	flashMMAMinSplitKeys = kernel.FmmaBk
	// flashMMAMinRows is the shortest pass the default gives the kernel.
	flashMMAMinRows = 128
)

// AttnMMAEnv is the environment variable that says where the prompt
// attention runs on the tensor cores (attn_mma_parts_fast, then
// attn_flash_mma_fast_hd*): "on" every pass the flash core takes, "off"
// none, unset passes of flashMMAMinRows rows or more; "k32" as "on" with
// the 32-key tiles where the head dim also has 16-key ones (which the
// others take: two blocks an SM).
const AttnMMAEnv = "PROSCENIUM_GPU_ATTN_MMA"

// attnMMA is $PROSCENIUM_GPU_ATTN_MMA.
var attnMMA = os.Getenv(AttnMMAEnv)

// AttnMMASetting checks a value of $PROSCENIUM_GPU_ATTN_MMA.
func AttnMMASetting(v string) error {
	switch v {
	case "", "on", "off", "k32":
		return nil
	}
	return fmt.Errorf("cuda: %s=%q: want on, off or k32", AttnMMAEnv, v)
}

// useFlashMMA says whether a pass of n rows runs the tensor-core kernels
// (where the geometry and the device take them).
func useFlashMMA(n int) bool {
	return attnMMA == "on" || attnMMA == "k32" || attnMMA == "" && n >= flashMMAMinRows
}

// flashCore names a flash kernel: attn_flash_fast, attn_flash2_fast (attn13's
// register tiles) or attn_flash_mma_fast_hd* (mma17's tensor cores: the
// 16-key tiles where the head dim has them; K32: always the 32-key tiles).
type flashCore int

const (
	coreFlash flashCore = iota
	coreFlash2
	coreFlashMMA
	coreFlashMMAK32
)

func (c flashCore) String() string {
	return [...]string{"flash", "flash2", "flash-mma", "flash-mma-k32"}[c]
}

// mma reports whether the core is a tensor-core instance.
func (c flashCore) mma() bool { return c == coreFlashMMA || c == coreFlashMMAK32 }

// flashMMAHeadDims are the instances' head dims, smallest first (k16: the
// 16-key tiles' instance, where there is one).
var flashMMAHeadDims = []struct {
	hd     int
	k, k16 kernel.AttnFlashMmaFastKernel
}{
	{32, kernel.AttnFlashMmaFastHd32, ""}, {64, kernel.AttnFlashMmaFastHd64, ""},
	{128, kernel.AttnFlashMmaFastHd128, ""}, {256, kernel.AttnFlashMmaFastHd256, kernel.AttnFlashMmaFastHd256k16},
}

// flashMMAKernel is core's tensor-core instance for the geometry's head dim
// (the smallest whose HD holds it; its 16-key tiles' where it has them,
// unless core is coreFlashMMAK32), that HD and the instance's dynamic
// shared memory in bytes; ok is false where none does (head dims a
// multiple of 8 up to 256).
func (g AttentionGeometry) flashMMAKernel(core flashCore) (k kernel.AttnFlashMmaFastKernel, hd, smem int, ok bool) {
	if g.HeadDim%8 != 0 || !core.mma() {
		return "", 0, 0, false
	}
	for _, i := range flashMMAHeadDims {
		if g.HeadDim <= i.hd {
			if core == coreFlashMMA && i.k16 != "" {
				return i.k16, i.hd, flashMMASmem(i.hd, 16), true
			}
			return i.k, i.hd, flashMMASmem(i.hd, kernel.FmmaBk), true
		}
	}
	return "", 0, 0, false
}

// flashMMASmem is an instance's dynamic shared memory for its HD and tile
// of bk keys (kernels/attention_prompt.cu FMMA_SMEM): the query parts, one
// tile's key and value parts, the tile's keys' inverse scales.
func flashMMASmem(hd, bk int) int {
	return (2*kernel.FmmaBq+4*bk)*(hd+kernel.FmmaPad)*2 + bk*4
}

// flashMMAKeys is the key rows of the parts for a cache of capacity rows:
// whole tiles.
func flashMMAKeys(capacity int) int {
	return (capacity + kernel.FmmaBk - 1) / kernel.FmmaBk * kernel.FmmaBk
}

// flashMMAScratch is the parts' regions (byte offsets from the flash
// regions' start, after the partials; none where the geometry has no
// tensor-core instance): the queries' FP16 pairs qp [rows·Heads, 2, HD] and
// their inverse scales qinv [rows·Heads]; the keys' and values' kp, vp
// [keys, KVHeads, 2, HD], the keys' inverse scales kinv [KVHeads, keys] and
// the value tiles' exponents vexp [KVHeads, keys/FmmaBk].
type flashMMAScratch struct{ qp, qinv, kp, vp, kinv, vexp int64 }

// flashMMATiles is the tensor-core kernel's blocks of each KV head for n rows.
func (g AttentionGeometry) flashMMATiles(n int) int { return g.queryTiles(n, flashMMABQ) }

// flashMMASplits is flashSplits for the tensor-core kernel.
func (g AttentionGeometry) flashMMASplits(n, maxLen int) int {
	return g.keySplits(n, maxLen, flashMMABQ, flashMMATargetBlocks, flashMMAMinSplitKeys)
}

// attnFlash is whether the fast prefill runs attn_flash_fast:
// $PROSCENIUM_GPU_ATTN_FLASH=0 keeps the core blocks (benchmarks, and the
// comparison of the two on the device).
var attnFlash = os.Getenv("PROSCENIUM_GPU_ATTN_FLASH") != "0"

// flashSupports reports whether attn_flash_fast takes the geometry: its
// lanes read head dims as float4s, at most flashMaxHeadDim.
func (g AttentionGeometry) flashSupports() bool {
	return g.HeadDim%4 == 0 && g.HeadDim <= flashMaxHeadDim
}

// flashTiles is the blocks of each KV head for n rows: flashBQ of the
// n·Heads/KVHeads query vectors each.
func (g AttentionGeometry) flashTiles(n int) int { return g.queryTiles(n, flashBQ) }

// flashSplits is the key splits of a flash call of n rows whose last row
// sees at most maxLen keys: one when the tiles of every KV head fill
// flashTargetBlocks, else enough splits to come near it, each of at least
// flashMinSplitKeys keys on average, at most flashMaxSplits.
func (g AttentionGeometry) flashSplits(n, maxLen int) int {
	return g.keySplits(n, maxLen, flashBQ, flashTargetBlocks, flashMinSplitKeys)
}

// flash2Tiles is attn_flash2_fast's blocks of each KV head for n rows:
// flash2BQ of the n·Heads/KVHeads query vectors each.
func (g AttentionGeometry) flash2Tiles(n int) int { return g.queryTiles(n, flash2BQ) }

// flash2Splits is flashSplits for attn_flash2_fast: one split when its
// tiles fill flash2TargetBlocks, else enough to come near it, each of at
// least flash2MinSplitKeys keys on average, at most flashMaxSplits.
func (g AttentionGeometry) flash2Splits(n, maxLen int) int {
	return g.keySplits(n, maxLen, flash2BQ, flash2TargetBlocks, flash2MinSplitKeys)
}

// queryTiles is the blocks of bq query vectors each KV head's n rows make.
func (g AttentionGeometry) queryTiles(n, bq int) int {
	return (n*(g.Heads/g.KVHeads) + bq - 1) / bq
}

// keySplits is a flash kernel's key splits for n rows whose last row sees
// at most maxLen keys, with blocks of bq query vectors: one when the blocks
// reach target, else enough to come near it, each split at least minKeys
// keys on average, at most flashMaxSplits.
func (g AttentionGeometry) keySplits(n, maxLen, bq, target, minKeys int) int {
	blocks := g.queryTiles(n, bq) * g.KVHeads
	if blocks >= target {
		return 1
	}
	return max(1, min(flashMaxSplits, (target+blocks-1)/blocks, (maxLen+minKeys-1)/minKeys))
}

// flash2Smem is attn_flash2_fast's dynamic shared memory in bytes for the
// geometry's head dim (kernels/attention_prompt.cu FLASH2_SMEM_FLOATS):
// the queries and a tile of keys or values, rows padded by 4 floats, the
// tile's scores and each vector's rescale factor.
func (g AttentionGeometry) flash2Smem() int {
	return 4 * ((kernel.Flash2Bq+kernel.Flash2Bk)*(g.HeadDim+4) + kernel.Flash2Bk*kernel.Flash2Ps + kernel.Flash2Bq)
}

// flashPartFloats is the partials a flash call of up to rows rows over a
// cache of capacity rows writes: [n·Heads, splits, flashPartHead + HeadDim]
// floats for the most of any n (none where no n splits).
func (g AttentionGeometry) flashPartFloats(rows, capacity int) int64 {
	var most int64
	for n := 1; n <= rows; n++ {
		// Any kernel's splits.
		if s := max(g.flashSplits(n, capacity), g.flash2Splits(n, capacity), g.flashMMASplits(n, capacity)); s > 1 {
			most = max(most, int64(n*g.Heads*s)*int64(flashPartHead+g.HeadDim))
		}
	}
	return most
}

// flashScratch is the flash call's regions from the start of the core's
// (they share them: a call runs one or the other): the normed queries of
// every row [rows, Heads, HeadDim], then the partials, then the tensor-core
// kernels' parts. end is where the regions end, as an offset from the
// core's start.
type flashScratch struct {
	qn, part int64
	mma      flashMMAScratch
	end      int64
}

func (g AttentionGeometry) flashLayout(rows, capacity int) flashScratch {
	var l flashScratch
	l.part = alignUp(4 * int64(rows) * int64(g.Heads*g.HeadDim))
	l.end = l.part + alignUp(4*g.flashPartFloats(rows, capacity))
	if _, hd, _, ok := g.flashMMAKernel(coreFlashMMA); ok {
		items, keys, kv := int64(rows*g.Heads), int64(flashMMAKeys(capacity)), int64(g.KVHeads)
		m := &l.mma
		m.qp = l.end
		m.qinv = m.qp + alignUp(items*2*int64(hd)*2)
		m.kp = m.qinv + alignUp(items*4)
		m.vp = m.kp + alignUp(keys*kv*2*int64(hd)*2)
		m.kinv = m.vp + alignUp(keys*kv*2*int64(hd)*2)
		m.vexp = m.kinv + alignUp(kv*keys*4)
		l.end = m.vexp + alignUp(kv*keys/kernel.FmmaBk*4)
	}
	return l
}

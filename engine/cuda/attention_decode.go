package cuda

import (
	"os"

	"proscenium/engine/cuda/kernel"
)

// This file sizes the decode step's one-launch attention
// (kernels/attention_decode.cu attn_decode_fast, Queue.attentionDecode; issues
// 27 and 30): under fast numerics a step's attention core — q/k norms, RoPE,
// the KV append, the softmax over the cache and the gate — for one row or
// the B rows of a B-row step, in one launch instead of attn_prep,
// attn_scores, attn_partial and attn_combine. A block takes up to
// decodeHeads query heads of one KV head over one split of the cache (each
// key and value read once per KV head, not once per query head); the last
// block of a row and head group to finish merges the splits' partials.

// AttnDecodeEnv is the environment variable that keeps the fast step's four
// attention kernels ("0"); otherwise it runs attn_decode_fast, the default
// since session 11's run 2 (the step of one take 2.233 → 2.173 ms after a
// 60-row prompt, 2.573 → 2.214 after 1000 rows; docs/PERF.md "attn32").
const AttnDecodeEnv = "PROSCENIUM_GPU_ATTN_DECODE"

// attnDecode is AttnDecodeEnv's choice, read once at start (a captured step
// keeps the kernels it was captured with).
var attnDecode = os.Getenv(AttnDecodeEnv) != "0"

// attnDecodeAhead: a step's one-launch attention reads the row's position
// and its first chunk of cached keys and values before its PDL wait, behind
// a q/k/v projection that lets it start only after its own wait
// (attn_decode_ahead_fast; Queue.attnInWaited; docs/PERF.md "dec28").
// $PROSCENIUM_GPU_ATTN_AHEAD=0 keeps the loads after the wait.
var attnDecodeAhead = os.Getenv("PROSCENIUM_GPU_ATTN_AHEAD") != "0"

const (
	decodeThreads = kernel.DecThreads
	// decodeHeads is the most query heads a block takes (the kernel's
	// butterfly sums eight heads' dot products at once).
	decodeHeads = kernel.DecHg
	// decodeMaxSplits is the most splits of a row's keys (a lane each in
	// the merge). The kernel uses ceil((pos+1)/kernel.DecRows) of them, at
	// most the grid's, so a short cache has few partials to merge.
	decodeMaxSplits = kernel.DecMaxSplits
	decodePartHead  = kernel.DecPartHead
	// decodeMaxHeadDim is the most head dims the lanes hold (four per
	// float4, DEC_MAXD4 float4s a lane).
	decodeMaxHeadDim = 128 * kernel.DecMaxd4
)

// decodeSupports reports whether attn_decode_fast takes the geometry: head
// dims as float4s, at most decodeMaxHeadDim.
func (g AttentionGeometry) decodeSupports() bool {
	return g.HeadDim%4 == 0 && g.HeadDim <= decodeMaxHeadDim && g.KVHeads > 0 && g.Heads%g.KVHeads == 0
}

// decodeGroups is the query heads a block takes (hb) and the blocks that
// share a KV head's heads (groups): G = Heads/KVHeads heads in groups of
// min(G, decodeHeads).
func (g AttentionGeometry) decodeGroups() (hb, groups int) {
	if g.KVHeads <= 0 || g.Heads < g.KVHeads {
		return 1, 0 // no attention (a plan without attention layers): no blocks
	}
	G := g.Heads / g.KVHeads
	hb = min(G, decodeHeads)
	return hb, (G + hb - 1) / hb
}

// decodeBlocksY is the grid's second dimension: every KV head's groups.
func (g AttentionGeometry) decodeBlocksY() int {
	_, groups := g.decodeGroups()
	return g.KVHeads * groups
}

// decodeSplits is the grid's splits for a cache of capacity rows: as many
// as rows of DEC_ROWS fill it, at most decodeMaxSplits (the kernel uses
// those the position needs).
func decodeSplits(capacity int) int {
	return max(1, min(decodeMaxSplits, (capacity+kernel.DecRows-1)/kernel.DecRows))
}

// decodeTargetBlocks is the blocks a launch aims at: about one per
// multiprocessor of an H200 (132). A block's 188 registers × 256 threads
// leave one resident a multiprocessor, so a grid of more would run in
// waves, and on a short cache most of its blocks have no keys and leave at
// once, each still a wave's slot. $PROSCENIUM_GPU_ATTN_DECODE_BLOCKS (a
// positive number) sets it for benchmarks.
var decodeTargetBlocks = positiveFromEnv("PROSCENIUM_GPU_ATTN_DECODE_BLOCKS", 128)

// decodeGridSplits is the grid's splits of a launch of n rows: the
// capacity's (decodeSplits) while n rows' blocks stay within
// decodeTargetBlocks, fewer for more rows (a block then takes more chunks
// of 32 rows in turn: B = 8 takes at the full geometry, 8 splits of 16
// blocks' rows each).
func (g AttentionGeometry) decodeGridSplits(n, capacity int) int {
	return max(1, min(decodeSplits(capacity), decodeTargetBlocks/(n*g.decodeBlocksY())))
}

// decodePartBytes is the partials of n rows over a cache of capacity rows:
// per row, block row and split, hb heads of decodePartHead + HeadDim floats
// (at the capacity's splits, the most any n takes).
func (g AttentionGeometry) decodePartBytes(n, capacity int) int64 {
	hb, _ := g.decodeGroups()
	return 4 * int64(n) * int64(g.decodeBlocksY()) * int64(decodeSplits(capacity)) * int64(hb) * int64(decodePartHead+g.HeadDim)
}

// decodeCounters is the tail counters of n rows (one per row and block row).
func (g AttentionGeometry) decodeCounters(n int) int { return n * g.decodeBlocksY() }

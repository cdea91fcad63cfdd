package cuda

import (
	"os"

	"proscenium/engine/cuda/kernel"
)

// moeDownStreamPerSM is the blocks a multiprocessor moe_down_stream_fast
// runs with (kernels/moe.cu; docs/PERF.md "stream22"): a fast B-row step's
// down projections walked by a grid of that many blocks an SM, each block's
// next item's weights in flight while it sums the current one, with
// moe_down2's sums. 0 runs moe_down2 (a block an item).
// $PROSCENIUM_GPU_MOE_DOWN_STREAM sets it: 0, 1 or 2 (the default; the
// kernel's bound is two blocks of 256 threads an SM).
var moeDownStreamPerSM = moeDownStreamSetting(os.Getenv("PROSCENIUM_GPU_MOE_DOWN_STREAM"))

func moeDownStreamSetting(v string) int {
	switch v {
	case "0":
		return 0
	case "1":
		return 1
	}
	return 2
}

// moeDownStreamGrid deals moe_down_stream_fast's items — ⌈h/64⌉ tiles of
// the n·k routed pairs, and of the shared expert's two halves for each group
// of up to DOWN2_NB rows — to at most maxBlocks blocks in equal rounds: the
// fewest blocks that take ⌈items / maxBlocks⌉ items each (a last round of a
// few items would be a wave of its own, bound by latency).
func moeDownStreamGrid(h, k, is, n, maxBlocks int) int {
	if maxBlocks < 1 || h < 1 || n < 1 {
		return 0
	}
	nt := (h + 63) / 64
	g := max(1, min(kernel.Down2Nb, kernel.StreamXs/max(is, 1)))
	items := 2*nt*((n+g-1)/g) + nt*n*k
	rounds := (items + maxBlocks - 1) / maxBlocks
	return (items + rounds - 1) / rounds
}

package cuda

import (
	"fmt"
	"os"

	"proscenium/engine/cuda/kernel"
)

// xp15 (issue 28; docs/PERF.md "xp15"): the fast prefill's dense GEMMs
// with X split into its three BF16 parts once a launch (kernels/gemm.cu
// gemm_xp_prep) instead of by every warp in the loop, and the q tiles
// reading those parts by ldmatrix (GEMM_MMA_XP). The same parts and MMA
// order as the q tile each replaces: the same bits.

// GemmXPartsEnv switches xp15's instances: "on" or unset (the default),
// "off" (the q tiles splitting x in their loop).
const GemmXPartsEnv = "PROSCENIUM_GPU_GEMM_XPARTS"

var gemmXParts = os.Getenv(GemmXPartsEnv)

// GemmXPartsSetting reports a value of GemmXPartsEnv that names no mode.
func GemmXPartsSetting(v string) error {
	switch v {
	case "", "on", "off":
		return nil
	}
	return fmt.Errorf("cuda: %s=%q (want on or off)", GemmXPartsEnv, v)
}

// gemmXPartsKernel is the X-parts entry point of tensor-core instance x
// (ok false: none is compiled, x runs as it is): the dense BF16 q tiles of
// 128 × 64, 128 × 32 and 64 × 32, and the 128 × 64 split-K tile.
func gemmXPartsKernel(x gemmMma) (k string, split, ok bool) {
	if x.parts != gemmParts || !x.pipe || x.split || x.wide != "" || x.f16 {
		return "", false, false
	}
	switch {
	case x.bm == 128 && x.bn == 64 && x.splits > 0:
		return "gemm_xp_bf16_m128n64qz", true, true
	case x.bm == 128 && x.bn == 64:
		return string(kernel.GemmXpBF16M128n64q), false, true
	case x.bm == 128 && x.bn == 32:
		return string(kernel.GemmXpBF16M128n32q), false, true
	case x.bm == 64 && x.bn == 32:
		return string(kernel.GemmXpBF16M64n32q), false, true
	}
	return "", false, false
}

// GemmXPartsKpad is the row pitch of a part (BF16 elements): cols rounded
// up to the GEMM's 32-column steps.
func GemmXPartsKpad(cols int) int {
	return (cols + kernel.GemmMmaBk - 1) / kernel.GemmMmaBk * kernel.GemmMmaBk
}

// GemmXPartsBytes is the scratch the parts of n X rows of cols columns take.
func GemmXPartsBytes(n, cols int) int64 { return 3 * int64(n) * int64(GemmXPartsKpad(cols)) * 2 }

// gemmXPartsTail splits a dense GEMM of n X rows, rows W rows and cols
// columns on the 128 × 64 tile whose grid leaves its last round of two
// blocks an SM mostly idle (at most a quarter full: a 700-row DeltaNet in
// projection is 11 × 97 = 1067 blocks, four rounds of 264 and 11 blocks,
// so a fifth round of 64 steps for 1 % of the work): the W rows of the
// whole rounds, rows1, run on the tile, and the rest on the split-K tile in
// z splits (each at least gemmSplitMinSteps steps), which spread the last
// tiles over the SMs. z 0: no split.
func gemmXPartsTail(n, rows, cols int) (rows1, z int) {
	const bm, bn, slots = 128, 64, 2 * gemmSMs
	nt, mt := (n+bn-1)/bn, (rows+bm-1)/bm
	full, rem := nt*mt/slots, nt*mt%slots
	if full == 0 || rem == 0 || 4*rem > slots {
		return 0, 0
	}
	mt1 := full * slots / nt
	if mt1 >= mt {
		return 0, 0
	}
	tiles := nt * (mt - mt1)
	steps := (cols + kernel.GemmMmaBk - 1) / kernel.GemmMmaBk
	z = min(gemmSplitMax, slots/tiles, steps/gemmSplitMinSteps, gemmSplitTiles/tiles)
	if z < 2 {
		return 0, 0
	}
	return mt1 * bm, z
}

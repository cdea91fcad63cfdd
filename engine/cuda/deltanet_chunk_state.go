package cuda

import (
	"fmt"
	"os"
)

// The fast policy's choice of chunked DeltaNet state kernel (dnstate34,
// issue 28; kernels/deltanet_chunk.cu, docs/PERF.md "dnstate34"): the SIMT
// kernel deltanet_chunk_state_fast (a float per fused multiply-add from
// shared memory, two barriers per 32-wide slice) or deltanet_chunk_state_tiled
// (register tiles, the chunk's inputs by cp.async into dynamic shared memory,
// four barriers a chunk). Exact always runs deltanet_chunk_state (the CPU's
// bits).

// deltaNetStateEnv is $PROSCENIUM_GPU_DN_STATE: "tiled" runs
// deltanet_chunk_state_tiled under fast, "simt" the old kernel; unset, the
// default below.
var deltaNetStateEnv = os.Getenv("PROSCENIUM_GPU_DN_STATE")

// deltaNetStateTiledDefault is the choice when the variable is unset: the
// tiled kernel since session 12's run 3 (a layer's chunked mixer at 300 rows
// 233 → 162 µs; the prefill of 300 / 700 rows 39.4 / 88.7 → 36.6 / 84.1 ms;
// docs/PERF.md "dnstate34").
const deltaNetStateTiledDefault = true

// deltaNetStateTiled is the fast policy's choice (a variable so that a test
// runs both kernels in one process); deltaNetStateErr, a value of the
// variable that is neither, fails every fast chunked prefill.
var deltaNetStateTiled, deltaNetStateErr = parseDeltaNetState(deltaNetStateEnv)

// parseDeltaNetState reads $PROSCENIUM_GPU_DN_STATE.
func parseDeltaNetState(s string) (bool, error) {
	switch s {
	case "":
		return deltaNetStateTiledDefault, nil
	case "tiled":
		return true, nil
	case "simt":
		return false, nil
	}
	return false, fmt.Errorf("PROSCENIUM_GPU_DN_STATE=%q: want tiled or simt", s)
}

// deltaNetStateTiledShared is deltanet_chunk_state_tiled's dynamic shared
// memory for key dim dk, in bytes (dkp = dk rounded up to 16): S's 32
// columns [dkp][32], W and q [128][dkp] and k [64][dkp], qm [64][64] (W, q
// and qm with 4 floats between groups of 4 rows: dnc_woff), Δ0, Δ and the
// decayed Δ [64][32] each, the cumulative decays [64]: 153.0 KB at Drama 3's
// dk = 128, 209.0 KB at the chunked form's bound 192.
func deltaNetStateTiledShared(dk int) int {
	dkp := (dk + 15) &^ 15
	return 4 * (dkp*32 + (128*dkp + 128) + 64*dkp + (64*64 + 64) + 3*64*32 + 64)
}

// deltaNetStateTiledMaxShared is the most dynamic shared memory a block may
// opt into on sm_90 (227 KB; sm_80 163 KB, sm_86/89 99 KB, where a launch
// that asks for more falls back to the SIMT kernel: deltaNetChunkState).
const deltaNetStateTiledMaxShared = 227 * 1024

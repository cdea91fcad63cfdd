package cuda

import (
	"fmt"
	"os"

	"proscenium/engine/cuda/kernel"
)

// The fast policy's chunked DeltaNet prep (dnprep16, issue 28;
// kernels/deltanet_chunk.cu, docs/PERF.md "early16"): deltanet_chunk_prep_fast
// (a block a row and value head) or deltanet_chunk_prep_tiled_fast (a block
// up to kernel.DncPtRows rows of a value head, every input of the block
// loaded at once; the same expressions). Exact always runs
// deltanet_chunk_prep (the CPU's bits).

// DeltaNetPrepEnv is the environment variable that picks the fast prep:
// "tiled" or "old" for every call, unset: the tiled prep for calls of
// deltaNetPrepTiledMinRows rows or more.
const DeltaNetPrepEnv = "PROSCENIUM_GPU_DN_PREP"

// deltaNetPrepTiledMinRows is the shortest call the default runs the tiled
// prep on. Session 16 (runs 3 and 4, the two alternating in one process):
// 700-row prefills 0.66–0.70 ms faster with it, 300-row ones 0.59–0.63 ms
// and 60-row ones 0.35–0.39 ms slower, although ncu times the kernel alone at
// 24.8 µs against 34.0 at 300 rows (docs/PERF.md "early16").
const deltaNetPrepTiledMinRows = 512

// tiledPrep says whether a fast call of n rows runs the tiled prep.
func tiledPrep(n int) bool {
	return deltaNetPrep == "tiled" || deltaNetPrep == "" && n >= deltaNetPrepTiledMinRows
}

// deltaNetPrep is $PROSCENIUM_GPU_DN_PREP (a variable so that a test runs
// both kernels in one process).
var deltaNetPrep = os.Getenv(DeltaNetPrepEnv)

// DeltaNetPrepSetting checks a value of $PROSCENIUM_GPU_DN_PREP.
func DeltaNetPrepSetting(v string) error {
	switch v {
	case "", "tiled", "old":
		return nil
	}
	return fmt.Errorf("cuda: %s=%q: want tiled or old", DeltaNetPrepEnv, v)
}

// deltaNetPrepSharedMax is the dynamic shared memory the tiled prep takes at
// most: with its static row norms, under the 48 KB every kernel may use
// without raising its limit.
const deltaNetPrepSharedMax = 44 << 10

// tiledPrepRows is the rows a block of the tiled prep takes for geometry g
// (its conv outputs, rows × (2·dk + dv) floats, in deltaNetPrepSharedMax),
// or 0 where the tiled prep does not take g: a conv wider than
// kernel.DncPtMaxk taps.
func (g DeltaNetGeometry) tiledPrepRows() int {
	if g.ConvKernel > kernel.DncPtMaxk || g.ConvKernel < 1 {
		return 0
	}
	cw := 2*g.KeyDim + g.ValueDim
	return min(kernel.DncPtRows, deltaNetPrepSharedMax/(4*cw))
}

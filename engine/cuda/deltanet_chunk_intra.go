package cuda

import (
	"fmt"
	"os"
)

// The fast policy's choice of chunked DeltaNet intra-chunk kernel (dnc13,
// issue 28; kernels/deltanet_chunk.cu, docs/PERF.md "dnc13"): the old
// deltanet_chunk_intra_fast (grid (nv, chunks, 2) of 512 threads, all 64 × 64
// products of a chunk, a thread 2 × 2 of each from scalar shared loads, the
// cumulative decay one thread's walk) or deltanet_chunk_intra_tiled (grid
// (nv, chunks, 3) of 128 threads, only the three 32 × 32 quadrants on or
// below the diagonal, a thread a 4 × 4 register tile from float4 loads, the
// decay the old chain in registers); with it deltanet_chunk_prep_rows (a
// block a key head and 8 rows, q and k once for the value heads sharing
// them; the old kernel a block a value head and row) and the gated norm
// deltanet_chunk_norm_warp (a warp a row and head, the old kernel a block).
// Exact always runs deltanet_chunk_prep, _intra and _norm (the CPU's bits).

// deltaNetChunkEnv is $PROSCENIUM_GPU_DN_CHUNK: "new" runs
// deltanet_chunk_prep_rows, _intra_tiled and _norm_warp under fast, "old"
// the old kernels; unset, the default below.
var deltaNetChunkEnv = os.Getenv("PROSCENIUM_GPU_DN_CHUNK")

// deltaNetChunkNewDefault is the choice when the variable is unset. The
// flip after the device run: false → true.
const deltaNetChunkNewDefault = false

// deltaNetChunkNew is the fast policy's choice (a variable so that a test
// runs both kernels in one process); deltaNetChunkErr, a value of the
// variable that is neither, fails every fast chunked prefill.
var deltaNetChunkNew, deltaNetChunkErr = parseDeltaNetChunk(deltaNetChunkEnv)

// parseDeltaNetChunk reads $PROSCENIUM_GPU_DN_CHUNK.
func parseDeltaNetChunk(s string) (bool, error) {
	switch s {
	case "":
		return deltaNetChunkNewDefault, nil
	case "new":
		return true, nil
	case "old":
		return false, nil
	}
	return false, fmt.Errorf("PROSCENIUM_GPU_DN_CHUNK=%q: want new or old", s)
}

// deltaNetChunkIntraQuadrants is deltanet_chunk_intra_tiled's blocks a head
// and chunk: the 32 × 32 quadrants of the chunk's 64 × 64 products on or
// below the diagonal (the one above is zeros, written by the first).
const deltaNetChunkIntraQuadrants = 3

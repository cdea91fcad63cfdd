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
// decay the old chain in registers). Exact always runs deltanet_chunk_intra
// (the CPU's bits).

// deltaNetChunkEnv is $PROSCENIUM_GPU_DN_CHUNK: "old" runs
// deltanet_chunk_intra_fast under fast, "intra" deltanet_chunk_intra_tiled
// for every call, "long" the tiled kernel for calls of
// deltaNetChunkIntraMinRows rows or more; unset, the default below.
var deltaNetChunkEnv = os.Getenv("PROSCENIUM_GPU_DN_CHUNK")

// deltaNetChunkKernels is which intra kernel the fast chunked prefill runs.
type deltaNetChunkKernels int

const (
	deltaNetChunkOld       deltaNetChunkKernels = iota // deltanet_chunk_intra_fast
	deltaNetChunkIntraLong                             // the tiled kernel for calls of deltaNetChunkIntraMinRows rows or more
	deltaNetChunkIntra                                 // deltanet_chunk_intra_tiled for every call
)

// deltaNetChunkDefault is the choice when the variable is unset: the tiled
// intra for calls of deltaNetChunkIntraMinRows rows or more, since session
// 13's run 4 on the H200 (docs/PERF.md "dnc13": the intra 40.6 → 21.4 µs a
// layer at 300 rows, 87.3 → 23.9 at 700, the rule 113 → 96 and 253 → 178;
// at 60 rows the intra 14.6 → 9.6 but the rule 38.4 → 51.2, so short calls
// keep the old kernel).
const deltaNetChunkDefault = deltaNetChunkIntraLong

// deltaNetChunkIntraMinRows is the shortest call the default runs the tiled
// intra on (two chunks).
const deltaNetChunkIntraMinRows = 128

// tiledIntra says whether a fast call of n rows runs deltanet_chunk_intra_tiled.
func (m deltaNetChunkKernels) tiledIntra(n int) bool {
	return m == deltaNetChunkIntra || m == deltaNetChunkIntraLong && n >= deltaNetChunkIntraMinRows
}

// deltaNetChunkMode is the fast policy's choice (a variable so that a test
// runs both kernels in one process); deltaNetChunkErr, a value of the
// variable that is none of them, fails every fast chunked prefill.
var deltaNetChunkMode, deltaNetChunkErr = parseDeltaNetChunk(deltaNetChunkEnv)

// parseDeltaNetChunk reads $PROSCENIUM_GPU_DN_CHUNK.
func parseDeltaNetChunk(s string) (deltaNetChunkKernels, error) {
	switch s {
	case "":
		return deltaNetChunkDefault, nil
	case "old":
		return deltaNetChunkOld, nil
	case "long":
		return deltaNetChunkIntraLong, nil
	case "intra":
		return deltaNetChunkIntra, nil
	}
	return deltaNetChunkDefault, fmt.Errorf("PROSCENIUM_GPU_DN_CHUNK=%q: want old, long or intra", s)
}

// deltaNetChunkIntraQuadrants is deltanet_chunk_intra_tiled's blocks a head
// and chunk: the 32 × 32 quadrants of the chunk's 64 × 64 products on or
// below the diagonal (the one above is zeros, written by the first).
const deltaNetChunkIntraQuadrants = 3

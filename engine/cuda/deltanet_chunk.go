package cuda

import "proscenium/engine/cuda/kernel"

// The chunked form of a DeltaNet prefill (kernels/deltanet_chunk.cu, launched
// by deltanet_chunk_cuda.go): which geometries and calls take it, and the
// scratch it needs beyond the projected rows and the output.

// deltaNetChunkRows is the chunk length (DNC_C; engine/cpu deltaNetChunk): a
// call's rows are cut at 0, 64, 128, … as the CPU's chunked form cuts them.
const deltaNetChunkRows = kernel.DncC

// deltaNetChunkMaxKeyDim is deltanet_chunk_state's bound: it keeps a
// [KeyDim, 32] slice of a head's state in shared memory.
const deltaNetChunkMaxKeyDim = kernel.DncMaxdk

// DeltaNetPrefill selects the kernels of a DeltaNet forward of more than one
// row.
type DeltaNetPrefill int

const (
	// DeltaNetChunkedPrefill runs the chunked form (the default; the CPU's
	// prefill, in its order of operations). Geometries it does not support
	// (KeyDim > deltaNetChunkMaxKeyDim) run the recurrence instead.
	DeltaNetChunkedPrefill DeltaNetPrefill = iota
	// DeltaNetRowPrefill runs deltanet_rows: the rows one after another in
	// one launch per layer (the one-row recurrence's arithmetic).
	DeltaNetRowPrefill
)

// chunkable reports whether the chunked kernels support the geometry.
func (g DeltaNetGeometry) chunkable() bool { return g.KeyDim <= deltaNetChunkMaxKeyDim }

// deltaNetChunkScratch is the byte offsets, within a layer's scratch, of the
// chunked form's regions, each head-major (row t of value head h at h·n + t
// for a call of n rows): the normed q and k [ValueHeads, n, KeyDim], v
// [ValueHeads, n, ValueDim], β, the log decay g and its cumulative sum within
// each chunk [ValueHeads, n], W [ValueHeads, n, KeyDim] and Δ0
// [ValueHeads, n, ValueDim], and per head and chunk the [64, 64] matrices
// (q_i·k_j)e^{c_i−c_j} (qm) and A (am). end is the first byte after them.
type deltaNetChunkScratch struct {
	qn, kn, v, beta, decay, cum, w, d0, qm, am, end int64
}

// chunkScratch lays out the regions for calls of up to rows rows after the
// regions every forward uses (the projected rows and the gated-norm output).
func (g DeltaNetGeometry) chunkScratch(rows int) deltaNetChunkScratch {
	r, nv := int64(rows), int64(g.ValueHeads)
	chunks := int64((rows + deltaNetChunkRows - 1) / deltaNetChunkRows)
	off := alignUp(g.scratchLayout(rows) + 4*r*int64(g.ValueHeads*g.ValueDim))
	next := func(floats int64) int64 {
		o := off
		off += alignUp(4 * floats)
		return o
	}
	var s deltaNetChunkScratch
	s.qn = next(nv * r * int64(g.KeyDim))
	s.kn = next(nv * r * int64(g.KeyDim))
	s.v = next(nv * r * int64(g.ValueDim))
	s.beta = next(nv * r)
	s.decay = next(nv * r)
	s.cum = next(nv * r)
	s.w = next(nv * r * int64(g.KeyDim))
	s.d0 = next(nv * r * int64(g.ValueDim))
	s.qm = next(nv * chunks * deltaNetChunkRows * deltaNetChunkRows)
	s.am = next(nv * chunks * deltaNetChunkRows * deltaNetChunkRows)
	s.end = off
	return s
}

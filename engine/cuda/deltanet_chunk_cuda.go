//go:build cuda

package cuda

// The chunked DeltaNet prefill's launch sequence (kernels/deltanet_chunk.cu;
// engine/cpu gatedDeltaRuleChunked is its reference). Like every mixer call
// it only enqueues work: pointers fixed by the layer's scratch, no host
// synchronisation.

// Blocks of the chunked kernels (DNC_*_THREADS in kernels/deltanet_chunk.cu).
const (
	deltaNetChunkPrepThreads  = 128
	deltaNetChunkIntraThreads = 512
	deltaNetChunkSolveThreads = 128
	deltaNetChunkStateThreads = 256
	deltaNetChunkNormThreads  = 128
)

// deltaNetChunked is the chunked form of DeltaNetForward between the input
// projections (proj) and out_proj: the conv, gates and q/k norms of every row
// and value head, the delta rule in 64-row chunks (deltaNetChunkRule), then
// the gated norm into core and the conv window advanced by the n rows.
func (q *Queue) deltaNetChunked(l *DeltaNetLayer, proj, core, stateS Tensor, n int) error {
	g := l.G
	s := g.chunkScratch(l.MaxRows)
	at := l.Scratch.At
	nk, nv, dk, dv, k := g.KeyHeads, g.ValueHeads, g.KeyDim, g.ValueDim, g.ConvKernel
	if err := q.Launch("deltanet_chunk_prep", [3]int{n, nv, 1}, deltaNetChunkPrepThreads,
		tArg(at(s.qn)), tArg(at(s.kn)), tArg(at(s.v)), tArg(at(s.beta)), tArg(at(s.decay)), tArg(proj), tArg(l.State),
		tArg(l.W.Conv), tArg(l.W.DtBias), tArg(l.W.ALog),
		IntArg(n), IntArg(nk), IntArg(nv), IntArg(dk), IntArg(dv), IntArg(k)); err != nil {
		return err
	}
	if err := q.deltaNetChunkRule(l, core, stateS, n); err != nil {
		return err
	}
	return q.Launch("deltanet_chunk_norm", [3]int{n, nv, 1}, deltaNetChunkNormThreads,
		tArg(core), tArg(proj), tArg(l.State), tArg(l.W.Norm),
		IntArg(n), IntArg(nk), IntArg(nv), IntArg(dk), IntArg(dv), IntArg(k), F32Arg(g.Eps))
}

// deltaNetChunkRule runs the gated delta rule on n rows whose normed q, k, v,
// β and log decay lie in the layer's chunk scratch (head-major), writing the
// outputs o to core [n, ValueHeads, ValueDim] and advancing the recurrent
// state stateS [ValueHeads, KeyDim, ValueDim]: per head, chunk and half of
// the chunk's rows the decay's cumulative sum and the chunk's products, per
// head, chunk and 128 columns the forward substitution, then per head and
// 32 value columns the chunks in order.
func (q *Queue) deltaNetChunkRule(l *DeltaNetLayer, core, stateS Tensor, n int) error {
	g := l.G
	s := g.chunkScratch(l.MaxRows)
	at := l.Scratch.At
	nv, dk, dv := g.ValueHeads, g.KeyDim, g.ValueDim
	chunks := (n + deltaNetChunkRows - 1) / deltaNetChunkRows
	if err := q.Launch("deltanet_chunk_intra", [3]int{nv, chunks, 2}, deltaNetChunkIntraThreads,
		tArg(at(s.qm)), tArg(at(s.am)), tArg(at(s.cum)), tArg(at(s.qn)), tArg(at(s.kn)), tArg(at(s.beta)),
		tArg(at(s.decay)), IntArg(n), IntArg(dk)); err != nil {
		return err
	}
	cols := (dv + dk + deltaNetChunkSolveThreads - 1) / deltaNetChunkSolveThreads
	if err := q.Launch("deltanet_chunk_solve", [3]int{nv, chunks, cols}, deltaNetChunkSolveThreads,
		tArg(at(s.w)), tArg(at(s.d0)), tArg(at(s.am)), tArg(at(s.cum)), tArg(at(s.kn)), tArg(at(s.v)),
		tArg(at(s.beta)), IntArg(n), IntArg(dk), IntArg(dv)); err != nil {
		return err
	}
	return q.Launch("deltanet_chunk_state", [3]int{nv, (dv + 31) / 32, 1}, deltaNetChunkStateThreads,
		tArg(core), tArg(stateS), tArg(at(s.qm)), tArg(at(s.w)), tArg(at(s.d0)), tArg(at(s.cum)),
		tArg(at(s.qn)), tArg(at(s.kn)), IntArg(n), IntArg(nv), IntArg(dk), IntArg(dv))
}

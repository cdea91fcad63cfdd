//go:build cuda

package cuda

import (
	"sync/atomic"

	"proscenium/engine/cuda/kernel"
)

// The chunked DeltaNet prefill's launch sequence (kernels/deltanet_chunk.cu;
// engine/cpu gatedDeltaRuleChunked is its reference). Like every mixer call
// it only enqueues work: pointers fixed by the layer's scratch, no host
// synchronisation. Every kernel runs the instance of the device's numerics
// policy (q.policy(): exact the CPU's bits, fast float32 with fused
// multiply-adds; docs/MODEL.md "Numerics policy").

// Blocks of the chunked kernels.
const (
	deltaNetChunkPrepThreads       = kernel.DncPrepThreads
	deltaNetChunkIntraThreads      = kernel.DncIntraThreads
	deltaNetChunkIntraTiledThreads = kernel.DncItThreads
	deltaNetChunkSolveThreads      = kernel.DncSolveThreads
	deltaNetChunkStateThreads      = kernel.DncStateThreads
	deltaNetChunkNormThreads       = kernel.DncNormThreads
)

// deltaNetChunked is the chunked form of DeltaNetForward between the input
// projections (proj) and out_proj: the conv, gates and q/k norms of every row
// and value head, the delta rule in 64-row chunks (deltaNetChunkRule), then
// the gated norm into core and the conv window advanced by the n rows.
func (q *Queue) deltaNetChunked(l *DeltaNetLayer, proj, core, stateS Tensor, n int) error {
	g := l.G
	nk, nv, dk, dv, k := g.KeyHeads, g.ValueHeads, g.KeyDim, g.ValueDim, g.ConvKernel
	if err := q.deltaNetChunkPrep(l, proj, n); err != nil {
		return err
	}
	if err := q.deltaNetChunkRule(l, core, stateS, n); err != nil {
		return err
	}
	// A prefill pass's out projection input: its X parts too (xp15; a
	// piece of 8 columns within one head).
	if dv%8 == 0 {
		if ok, err := q.withXParts(core.addr(), n, nv*dv, nv*dv, func(xp kernel.Ptr, pstride int64, kpad int) error {
			return kernel.DeltaNetChunkNormXpFast(q, [3]int{n, nv, 1}, deltaNetChunkNormThreads, tPtr(core), tPtr(proj),
				tPtr(l.State), tPtr(l.W.Norm), n, nk, nv, dk, dv, k, g.Eps, xp, pstride, kpad)
		}); ok {
			return err
		}
	}
	return kernel.DeltaNetChunkNorm(q, q.policy(), [3]int{n, nv, 1}, deltaNetChunkNormThreads, tPtr(core), tPtr(proj), tPtr(l.State), tPtr(l.W.Norm), n, nk, nv, dk, dv, k, g.Eps)
}

// deltaNetChunkPrep runs the conv, SiLU, q/k norms and gates of n rows of
// proj into the layer's chunk scratch: deltanet_chunk_prep_tiled_fast under
// fast where it takes the geometry and tiledPrep(n), else the policy's
// deltanet_chunk_prep.
func (q *Queue) deltaNetChunkPrep(l *DeltaNetLayer, proj Tensor, n int) error {
	g := l.G
	s := g.chunkScratch(l.MaxRows)
	at := l.Scratch.At
	nk, nv, dk, dv, k := g.KeyHeads, g.ValueHeads, g.KeyDim, g.ValueDim, g.ConvKernel
	if err := DeltaNetPrepSetting(deltaNetPrep); err != nil {
		return err
	}
	if rows := g.tiledPrepRows(); !q.d.Numerics.Exact() && tiledPrep(n) && rows > 0 {
		smem := rows * (2*dk + dv) * 4
		return kernel.DeltaNetChunkPrepTiledFast(sharedLauncher{q, smem}, [3]int{(n + rows - 1) / rows, nv, 1}, deltaNetChunkPrepThreads, kernel.DeltaNetChunkPrepTiledFastArgs{
			Qn: tPtr(at(s.qn)), Kn: tPtr(at(s.kn)), Vv: tPtr(at(s.v)), Beta: tPtr(at(s.beta)), Decay: tPtr(at(s.decay)),
			Proj: tPtr(proj), Convstate: tPtr(l.State), Convw: tPtr(l.W.Conv), Dtbias: tPtr(l.W.DtBias), Alog: tPtr(l.W.ALog),
			N: n, Nk: nk, Nv: nv, Dk: dk, Dv: dv, K: k, Rows: rows})
	}
	return kernel.DeltaNetChunkPrep(q, q.policy(), [3]int{n, nv, 1}, deltaNetChunkPrepThreads, kernel.DeltaNetChunkPrepArgs{
		Qn: tPtr(at(s.qn)), Kn: tPtr(at(s.kn)), Vv: tPtr(at(s.v)), Beta: tPtr(at(s.beta)), Decay: tPtr(at(s.decay)),
		Proj: tPtr(proj), Convstate: tPtr(l.State), Convw: tPtr(l.W.Conv), Dtbias: tPtr(l.W.DtBias), Alog: tPtr(l.W.ALog),
		N: n, Nk: nk, Nv: nv, Dk: dk, Dv: dv, K: k})
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
	if err := q.deltaNetChunkIntra(l, n); err != nil {
		return err
	}
	cols := (dv + dk + deltaNetChunkSolveThreads - 1) / deltaNetChunkSolveThreads
	if err := kernel.DeltaNetChunkSolve(q, q.policy(), [3]int{nv, chunks, cols}, deltaNetChunkSolveThreads, tPtr(at(s.w)), tPtr(at(s.d0)), tPtr(at(s.am)), tPtr(at(s.cum)), tPtr(at(s.kn)), tPtr(at(s.v)), tPtr(at(s.beta)), n, dk, dv); err != nil {
		return err
	}
	return q.deltaNetChunkState(l, core, stateS, n)
}

// deltaNetChunkIntra launches the intra-chunk products (per head and chunk:
// the cumulative decay, qm and am): under fast deltanet_chunk_intra_tiled
// where $PROSCENIUM_GPU_DN_CHUNK (deltaNetChunkMode) and the rows say so, else
// deltanet_chunk_intra(_fast).
func (q *Queue) deltaNetChunkIntra(l *DeltaNetLayer, n int) error {
	g := l.G
	s := g.chunkScratch(l.MaxRows)
	at := l.Scratch.At
	nv, dk := g.ValueHeads, g.KeyDim
	chunks := (n + deltaNetChunkRows - 1) / deltaNetChunkRows
	if q.policy() == kernel.Fast {
		if deltaNetChunkErr != nil {
			return deltaNetChunkErr
		}
		if deltaNetChunkMode.tiledIntra(n) {
			return kernel.DeltaNetChunkIntraTiled(q, [3]int{nv, chunks, deltaNetChunkIntraQuadrants}, deltaNetChunkIntraTiledThreads, tPtr(at(s.qm)), tPtr(at(s.am)), tPtr(at(s.cum)), tPtr(at(s.qn)), tPtr(at(s.kn)), tPtr(at(s.beta)), tPtr(at(s.decay)), n, dk)
		}
	}
	return kernel.DeltaNetChunkIntra(q, q.policy(), [3]int{nv, chunks, 2}, deltaNetChunkIntraThreads, tPtr(at(s.qm)), tPtr(at(s.am)), tPtr(at(s.cum)), tPtr(at(s.qn)), tPtr(at(s.kn)), tPtr(at(s.beta)), tPtr(at(s.decay)), n, dk)
}

// deltaNetChunkState launches the state pass (per head and 32 value
// columns, the chunks in order): under fast deltanet_chunk_state_tiled where
// $PROSCENIUM_GPU_DN_STATE (deltaNetStateTiled) picks it and the device
// grants its dynamic shared memory, else deltanet_chunk_state(_fast). A
// device that refuses the shared memory (cuFuncSetAttribute, before any
// launch: sm_86/89 grant 99 KB) is remembered and runs the SIMT kernel.
func (q *Queue) deltaNetChunkState(l *DeltaNetLayer, core, stateS Tensor, n int) error {
	g := l.G
	s := g.chunkScratch(l.MaxRows)
	at := l.Scratch.At
	nv, dk, dv := g.ValueHeads, g.KeyDim, g.ValueDim
	grid := [3]int{nv, (dv + 31) / 32, 1}
	if q.policy() == kernel.Fast {
		if deltaNetStateErr != nil {
			return deltaNetStateErr
		}
		if b := deltaNetStateTiledShared(dk); deltaNetStateTiled && b <= deltaNetStateTiledMaxShared && !deltaNetStateTiledRefused.Load() {
			err := q.Queue.SharedLimit("deltanet_chunk_state_tiled", b)
			if err == nil {
				return kernel.DeltaNetChunkStateTiled(sharedLauncher{q, b}, grid, deltaNetChunkStateThreads, tPtr(core), tPtr(stateS), tPtr(at(s.qm)), tPtr(at(s.w)), tPtr(at(s.d0)), tPtr(at(s.cum)), tPtr(at(s.qn)), tPtr(at(s.kn)), n, nv, dk, dv)
			}
			deltaNetStateTiledRefused.Store(true)
		}
	}
	return kernel.DeltaNetChunkState(q, q.policy(), grid, deltaNetChunkStateThreads, tPtr(core), tPtr(stateS), tPtr(at(s.qm)), tPtr(at(s.w)), tPtr(at(s.d0)), tPtr(at(s.cum)), tPtr(at(s.qn)), tPtr(at(s.kn)), n, nv, dk, dv)
}

// deltaNetStateTiledRefused: a device refused deltanet_chunk_state_tiled's
// shared memory; the process runs the SIMT kernel from then on.
var deltaNetStateTiledRefused atomic.Bool

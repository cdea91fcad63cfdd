//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"os"

	"gorgonia.org/cu"

	"proscenium/engine/cuda/kernel"
)

// The mixers' launch sequences. Every call only enqueues work on the stream:
// no allocation, no host synchronisation, pointers fixed by the layer, the
// attention's position read from device memory, so a decode step can be
// captured into a graph once and replayed.

// fits checks that n bytes from the tensor lie in its device block.
func (t Tensor) fits(n int64, what string) error { return checkFits(t.Block, t.Off, n, what) }

// view is a Block describing bytes at t, for the launch helpers that take
// whole blocks (the GEMV). It is never freed.
func (t Tensor) view(bytes int64, what string) (*Block, error) {
	if err := t.fits(bytes, what); err != nil {
		return nil, err
	}
	return &Block{Kind: DeviceMem, Ptr: t.addr(), Bytes: bytes}, nil
}

func tPtr(t Tensor) kernel.Ptr { return kernel.Ptr(t.addr()) }

// projection is one [rows, cols] BF16 matrix applied to n rows of x into
// columns col… of y (row stride ystride floats): the GEMV for one row, the
// GEMM for more, both with float64 sums (the numerics contract's rule 1).
// site says which projection it is (the GEMV's weights ahead, gemvAhead).
func (q *Queue) projection(y Tensor, ystride, col int, w Tensor, x Tensor, n, rows, cols int, site gemvSite) error {
	return q.projectionWaited(y, ystride, col, w, x, n, rows, cols, site, false)
}

// projectionWaited is projection; waited: the one-row GEMV's Gemv.Waited.
func (q *Queue) projectionWaited(y Tensor, ystride, col int, w Tensor, x Tensor, n, rows, cols int, site gemvSite, waited bool) error {
	if n == 1 {
		wb, err := w.view(int64(rows)*int64(cols)*2, "projection weights")
		if err != nil {
			return err
		}
		xb, err := x.view(int64(cols)*4, "projection x")
		if err != nil {
			return err
		}
		yb, err := y.At(int64(col)*4).view(int64(rows)*4, "projection y")
		if err != nil {
			return err
		}
		g := q.backboneGemv(Gemv{Rows: rows, Cols: cols, N: 1, Mats: 1}, false, site)
		g.Waited = waited
		return q.GemvBF16(g, yb, wb, xb)
	}
	return q.GemmBF16(Gemm{N: n, Rows: rows, Cols: cols, YStride: ystride}, y.At(int64(col)*4), w, x)
}

// contiguous reports whether the tensors lie one after another in one
// block, each sizes[i] bytes.
func contiguous(ts []Tensor, sizes []int64) bool {
	for i := 1; i < len(ts); i++ {
		if ts[i].Block != ts[0].Block || ts[i].Off != ts[i-1].Off+sizes[i-1] {
			return false
		}
	}
	return true
}

// stackedProjections applies matrices ws ([rows[i], cols] BF16 each) to n
// rows of x, writing each row's outputs side by side into y (row stride the
// sum of rows): one launch when the matrices are contiguous.
func (q *Queue) stackedProjections(y Tensor, ws []Tensor, rows []int, x Tensor, n, cols int) error {
	return q.stacked(func(y Tensor, ystride, col int, w Tensor, x Tensor, n, rows, cols int) error {
		return q.projection(y, ystride, col, w, x, n, rows, cols, siteIn)
	}, y, ws, rows, x, n, cols)
}

// projectFunc is a projection of n rows (Queue.projection's parameters but
// its site).
type projectFunc func(y Tensor, ystride, col int, w Tensor, x Tensor, n, rows, cols int) error

// stacked is stackedProjections with each projection run by project.
func (q *Queue) stacked(project projectFunc, y Tensor, ws []Tensor, rows []int, x Tensor, n, cols int) error {
	total := 0
	sizes := make([]int64, len(ws))
	for i, r := range rows {
		total += r
		sizes[i] = int64(r) * int64(cols) * 2
	}
	if contiguous(ws, sizes) {
		return project(y, total, 0, ws[0], x, n, total, cols)
	}
	col := 0
	for i, w := range ws {
		if err := project(y, total, col, w, x, n, rows[i], cols); err != nil {
			return err
		}
		col += rows[i]
	}
	return nil
}

func (l *DeltaNetLayer) check(out, x Tensor, n int) error {
	g := l.G
	if err := g.Validate(); err != nil {
		return err
	}
	if n < 1 || n > l.MaxRows {
		return fmt.Errorf("cuda deltanet: %d rows (layer takes 1…%d)", n, l.MaxRows)
	}
	ch, vd, nv := int64(g.Channels()), int64(g.ValueHeads*g.ValueDim), int64(g.ValueHeads)
	h := int64(g.Hidden)
	w := l.W
	return firstErr(
		w.InQKV.fits(ch*h*2, "deltanet in_proj_qkv"), w.InZ.fits(vd*h*2, "deltanet in_proj_z"),
		w.InB.fits(nv*h*2, "deltanet in_proj_b"), w.InA.fits(nv*h*2, "deltanet in_proj_a"),
		w.Conv.fits(ch*int64(g.ConvKernel)*4, "deltanet conv1d"), w.DtBias.fits(nv*4, "deltanet dt_bias"),
		w.ALog.fits(nv*4, "deltanet A_log"), w.Norm.fits(int64(g.ValueDim)*4, "deltanet norm"),
		w.Out.fits(h*vd*2, "deltanet out_proj"),
		l.State.fits(g.StateBytes(), "deltanet state"), l.Scratch.fits(g.ScratchBytes(l.MaxRows), "deltanet scratch"),
		x.fits(int64(n)*h*4, "deltanet x"), out.fits(int64(n)*h*4, "deltanet out"))
}

// DeltaNetForward computes the DeltaNet mixer's output out [n, Hidden] for n
// new rows x [n, Hidden] (already input-normed) and advances the layer's
// state (engine/cpu deltaNetForward): the input projections, the mixer
// between them and out_proj (deltaNetMix: one row the recurrence, more the
// chunked form, as the CPU chooses) and the output projection.
func (q *Queue) DeltaNetForward(l *DeltaNetLayer, out, x Tensor, n int) error {
	return q.deltaNetForward(l, out, x, n, n > 1)
}

// deltaNetForward is DeltaNetForward with the form of the delta rule given:
// chunked for the rows of a prompt the CPU runs through its chunked form
// (a prefill pass of one row that continues a longer prompt takes it too).
func (q *Queue) deltaNetForward(l *DeltaNetLayer, out, x Tensor, n int, chunked bool) error {
	o, err := q.deltaNetCore(l, out, x, n, chunked, nil)
	if err != nil {
		return err
	}
	return o.project(q, out, n)
}

// mixerOut is a mixer's output projection still to run: [n, Hidden] = W
// ([Hidden, Cols] BF16) · In [n, Cols].
type mixerOut struct {
	W, In        Tensor
	Hidden, Cols int
}

func (o mixerOut) project(q *Queue, out Tensor, n int) error {
	return q.projection(out, o.Hidden, 0, o.W, o.In, n, o.Hidden, o.Cols, siteOut)
}

// deltaNetCore is deltaNetForward up to its output projection, which it
// returns. With counters (the fused step's, one per value head) a one-row
// split step runs as one launch (deltanet_step_fused_fast).
func (q *Queue) deltaNetCore(l *DeltaNetLayer, out, x Tensor, n int, chunked bool, counters *Block) (mixerOut, error) {
	if err := l.check(out, x, n); err != nil {
		return mixerOut{}, err
	}
	g := l.G
	vd := g.ValueHeads * g.ValueDim
	core := l.Scratch.At(g.scratchLayout(l.MaxRows))
	waited := n == 1 && !chunked && q.deltaNetInWaited(1)
	ins, inRows := l.inputProjections()
	if err := q.stacked(func(y Tensor, ystride, col int, w Tensor, x Tensor, n, rows, cols int) error {
		return q.projectionWaited(y, ystride, col, w, x, n, rows, cols, siteIn, waited)
	}, l.Scratch, ins, inRows, x, n, g.Hidden); err != nil {
		return mixerOut{}, err
	}
	var err error
	if counters != nil && n == 1 && !chunked && l.splitStep() {
		err = q.deltaNetStepFused(l, counters)
	} else {
		err = q.deltaNetMixBehind(l, n, chunked, waited)
	}
	if err != nil {
		return mixerOut{}, err
	}
	return mixerOut{W: l.W.Out, In: core, Hidden: g.Hidden, Cols: vd}, nil
}

// deltaNetMix is the mixer between the input projections (the projected rows
// at the start of the layer's scratch, [n, ProjWidth]) and out_proj (the
// gated-norm output core, after them): the conv and its state, the gates,
// the q/k norms, the delta rule and the gated norm. chunked selects the
// chunked form (deltanet_chunk_cuda.go), which gives the CPU's bits for a
// call of more than one row; otherwise the recurrence, the CPU's bits for one
// row: the step kernels (l.Step) for one row, deltanet_rows for more (the
// rows in turn). Two cases cannot follow the CPU's choice and run the
// recurrence for several rows (within 1e-5 of the CPU's chunked form, not
// its bits): l.Prefill == DeltaNetRowPrefill, and geometries the chunked
// kernels do not support (KeyDim > deltaNetChunkMaxKeyDim).
func (q *Queue) deltaNetMix(l *DeltaNetLayer, n int, chunked bool) error {
	return q.deltaNetMixBehind(l, n, chunked, false)
}

// deltaNetMixBehind is deltaNetMix; waited says the launch just before is
// this step's input projection and lets this one start only after its own
// wait (deltaNetInWaited's answer), so the one-row cluster step copies the
// state, the conv window and the weights before its wait
// (deltanet_step_cluster_ahead_fast).
func (q *Queue) deltaNetMixBehind(l *DeltaNetLayer, n int, chunked, waited bool) error {
	g := l.G
	nv := g.ValueHeads
	proj := l.Scratch
	core := l.Scratch.At(g.scratchLayout(l.MaxRows))
	w := l.W
	stateS := l.State.At(4 * int64(g.convStateFloats()))
	if chunked && l.Prefill == DeltaNetChunkedPrefill && g.chunkable() && l.MaxRows > 1 { // ScratchBytes has its regions
		return q.deltaNetChunked(l, proj, core, stateS, n)
	}
	if n == 1 && l.clusterStep(q, 1) {
		launch := kernel.DeltaNetStepClusterFast
		if waited {
			launch = kernel.DeltaNetStepClusterAheadFast
		}
		return launch(q, [3]int{nv, kernel.DncCluster, 1}, kernel.DncThreads, tPtr(core), tPtr(proj),
			tPtr(l.State), tPtr(stateS), tPtr(w.Conv), tPtr(w.DtBias), tPtr(w.ALog), tPtr(w.Norm), g.KeyHeads, nv, g.KeyDim,
			g.ValueDim, g.ConvKernel, g.Eps)
	}
	if n == 1 && l.splitStep() {
		if err := kernel.DeltaNetStepCols(q, q.policy(), [3]int{nv, (g.ValueDim + 31) / 32, 1}, deltaNetSplitThreads, tPtr(core), tPtr(proj), tPtr(l.State), tPtr(stateS), tPtr(w.Conv), tPtr(w.DtBias), tPtr(w.ALog), g.KeyHeads, nv, g.KeyDim, g.ValueDim, g.ConvKernel); err != nil {
			return err
		}
		return kernel.DeltaNetStepNorm(q, q.policy(), [3]int{nv, 1, 1}, deltaNetSplitThreads, tPtr(core), tPtr(proj), tPtr(l.State), tPtr(w.Norm), g.KeyHeads, nv, g.KeyDim, g.ValueDim, g.ConvKernel, g.Eps)
	}
	return kernel.DeltaNetRows(q, [3]int{nv, 1, 1}, deltaNetThreads, kernel.DeltaNetRowsArgs{
		Core: tPtr(core), Proj: tPtr(proj), Convstate: tPtr(l.State), S: tPtr(stateS), Convw: tPtr(w.Conv),
		Dtbias: tPtr(w.DtBias), Alog: tPtr(w.ALog), Normw: tPtr(w.Norm), N: n, Nk: g.KeyHeads, Nv: nv, Dk: g.KeyDim,
		Dv: g.ValueDim, K: g.ConvKernel, Eps: g.Eps})
}

// splitStep reports whether a one-row step runs the split kernels (or the
// cluster step, which stands in for them where it can run).
func (l *DeltaNetLayer) splitStep() bool {
	return (l.Step == DeltaNetSplitStep || l.Step == DeltaNetClusterStep) && l.G.KeyDim <= deltaNetSplitMaxKeyDim
}

// clusterStep reports whether a step of n rows (1: the one-take step) on q
// runs deltanet_step_cluster_fast: the layer asks for it
// (DeltaNetClusterStep, or DeltaNetSplitStep under deltaNetClusterDefault
// for up to deltaNetClusterMaxRows rows), the numerics are fast, the device
// has thread block clusters (sm_90) and the geometry fits the kernel.
func (l *DeltaNetLayer) clusterStep(q *Queue, n int) bool {
	want := l.Step == DeltaNetClusterStep || (l.Step == DeltaNetSplitStep && deltaNetClusterDefault && n <= deltaNetClusterMaxRows)
	return want && !q.d.Numerics.Exact() && q.d.Info.Major >= 9 && l.G.clusterable()
}

// deltaNetStepFused is deltaNetMix's split step of one row in one launch
// under fast numerics: deltanet_step_cols, then deltanet_step_norm's part of
// each head in the last of the head's blocks (counters: ValueHeads zero uint32s).
func (q *Queue) deltaNetStepFused(l *DeltaNetLayer, counters *Block) error {
	g := l.G
	nv := g.ValueHeads
	if q.d.Numerics.Exact() {
		return fmt.Errorf("cuda deltanet: the fused step runs under fast numerics only")
	}
	if err := checkFits(counters, 0, int64(nv*4), "deltanet fused step counters"); err != nil {
		return err
	}
	core := l.Scratch.At(g.scratchLayout(l.MaxRows))
	w := l.W
	return kernel.DeltaNetStepFusedFast(q, [3]int{nv, (g.ValueDim + 31) / 32, 1}, deltaNetSplitThreads, kernel.DeltaNetStepFusedFastArgs{
		Core: tPtr(core), Proj: tPtr(l.Scratch), Convstate: tPtr(l.State), S: tPtr(l.State.At(4 * int64(g.convStateFloats()))),
		Convw: tPtr(w.Conv), Dtbias: tPtr(w.DtBias), Alog: tPtr(w.ALog), Normw: tPtr(w.Norm), Nk: g.KeyHeads, Nv: nv,
		Dk: g.KeyDim, Dv: g.ValueDim, K: g.ConvKernel, Eps: g.Eps, Counters: devPtr(counters)})
}

// ZeroTensor sets bytes of device memory at t to zero (a state reset).
func (q *Queue) ZeroTensor(t Tensor, bytes int64) error {
	if err := t.fits(bytes, "zero"); err != nil {
		return err
	}
	if bytes%4 != 0 {
		return fmt.Errorf("cuda: zero %d bytes: not whole words", bytes)
	}
	return cu.MemsetD32Async(cu.DevicePtr(t.addr()), 0, bytes/4, q.Stream())
}

// ResetDeltaNet zeroes the layer's conv and recurrent state (a new take).
func (q *Queue) ResetDeltaNet(l *DeltaNetLayer) error { return q.ZeroTensor(l.State, l.G.StateBytes()) }

// AddInt32 adds v to the int32 at t on the device (a position counter the
// captured step reads, advanced by the step itself).
func (q *Queue) AddInt32(t Tensor, v int) error {
	if err := t.fits(4, "add int32"); err != nil {
		return err
	}
	return kernel.AddI32(q, [3]int{1, 1, 1}, 32, tPtr(t), v)
}

func (l *AttentionLayer) check(out, x Tensor, n int, pos Tensor) error {
	g := l.G
	if err := g.Validate(); err != nil {
		return err
	}
	if n < 1 || n > l.MaxRows {
		return fmt.Errorf("cuda attention: %d rows (layer takes 1…%d)", n, l.MaxRows)
	}
	if n > l.Capacity {
		return fmt.Errorf("cuda attention: %d rows exceed the KV cache's %d", n, l.Capacity)
	}
	h, hd := int64(g.Hidden), int64(g.HeadDim)
	qw, kw := int64(g.Heads)*hd, int64(g.KVHeads)*hd
	w := l.W
	return firstErr(
		w.Q.fits(2*qw*h*2, "attention q_proj"), w.K.fits(kw*h*2, "attention k_proj"), w.V.fits(kw*h*2, "attention v_proj"),
		w.O.fits(h*qw*2, "attention o_proj"), w.QNorm.fits(hd*4, "attention q_norm"), w.KNorm.fits(hd*4, "attention k_norm"),
		l.KV.fits(g.KVBytes(l.Capacity), "attention kv cache"),
		l.Scratch.fits(g.ScratchBytesBlocks(l.MaxRows, l.coreRows(), l.Capacity), "attention scratch"),
		pos.fits(4*int64(l.blocks(n)), "attention positions"), x.fits(int64(n)*h*4, "attention x"), out.fits(int64(n)*h*4, "attention out"))
}

// AttentionForward computes the attention mixer's output out [n, Hidden] for
// n new rows x (already input-normed) at positions pos…pos+n−1, where pos is
// an int32 in device memory (the rows already cached; the caller advances it
// after the step's last layer, AddInt32), and appends their keys and values
// to the cache (engine/cpu attentionForward). maxLen bounds pos+n; with more
// than one row it sets how many blocks split each row's keys (one per 16
// rows, at most 32); 0 means the capacity. A one-row step always splits its
// keys over 32 blocks that share out the rows cached at run time, so a
// captured step needs no bound. Rows past the capacity are not cached and
// their output is NaN. More rows than the layer's CoreRows run their core in
// blocks of CoreRows rows: pos then holds each block's first position
// (block k's at pos + 4k), written by the host (the rows cached before the
// call, plus k·CoreRows). Under fast numerics a call of more than one row
// runs its core over every row at once instead (attentionFlash, reading
// the first position only).
func (q *Queue) AttentionForward(l *AttentionLayer, out, x Tensor, n int, pos Tensor, maxLen int) error {
	o, err := q.attentionUpToOut(l, out, x, n, pos, maxLen, nil, nil)
	if err != nil {
		return err
	}
	return o.project(q, out, n)
}

// attentionUpToOut is AttentionForward up to its output projection, which it
// returns. With counters (the fused step's, one per head) a one-row step's
// attn_partial and attn_combine run as one launch (attn_partial_combine_fast).
// With dec (a step's tail counters, zero) a one-row step under fast runs its
// whole core as one launch where decodeApplies (attentionDecode).
func (q *Queue) attentionUpToOut(l *AttentionLayer, out, x Tensor, n int, pos Tensor, maxLen int, counters, dec *Block) (mixerOut, error) {
	if err := l.check(out, x, n, pos); err != nil {
		return mixerOut{}, err
	}
	g := l.G
	qw, kw := g.Heads*g.HeadDim, g.KVHeads*g.HeadDim
	w := l.W
	waited := n == 1 && q.attnInWaited(l, 1, dec)
	if err := q.stacked(func(y Tensor, ystride, col int, w Tensor, x Tensor, n, rows, cols int) error {
		return q.projectionWaited(y, ystride, col, w, x, n, rows, cols, siteIn, waited)
	}, l.Scratch, []Tensor{w.Q, w.K, w.V}, []int{2 * qw, kw, kw}, x, n, g.Hidden); err != nil {
		return mixerOut{}, err
	}
	var err error
	switch {
	case n == 1 && q.decodeApplies(l, n, dec):
		err = q.attentionDecode(l, n, pos, nil, dec, waited)
	case q.flashApplies(l, n, counters):
		err = q.attentionFlash(l, n, pos, maxLen)
	default:
		err = q.attentionBlocks(l, n, pos, maxLen, counters)
	}
	if err != nil {
		return mixerOut{}, err
	}
	return mixerOut{W: w.O, In: l.regions().attn, Hidden: g.Hidden, Cols: qw}, nil
}

// blocks is the core blocks of a call of n rows (AttentionForward).
func (l *AttentionLayer) blocks(n int) int {
	c := l.coreRows()
	return (n + c - 1) / c
}

// attentionBlocks runs the core over the n projected rows in blocks of the
// layer's core rows, block k at the position pos + 4k holds: its queries,
// scores and partials in the block-sized regions, its rows of proj and attn
// at its offset. Each block appends its keys and values before the next
// block's scores read them, so a block attends over everything before it,
// as separate calls of the block's rows would.
func (q *Queue) attentionBlocks(l *AttentionLayer, n int, pos Tensor, maxLen int, counters *Block) error {
	c := l.coreRows()
	for s, k := 0, int64(0); s < n; s, k = s+c, k+1 {
		if err := q.attentionCoreAt(l, s, min(c, n-s), pos.At(4*k), maxLen, counters); err != nil {
			return err
		}
	}
	return nil
}

// attentionCore is AttentionForward between its projections (engine/cpu
// attentionCore): from the projected rows at the start of the scratch it
// norms and rotates the queries and keys, appends keys and values to the
// cache, and writes the gated attention into the scratch's attn region, in
// four launches: attn_prep; attn_scores (every score and each split's
// maximum); attn_partial (each split's float64 sums under the row's global
// maximum); attn_combine (the sums of the splits, divided and gated).
func (q *Queue) attentionCore(l *AttentionLayer, n int, pos Tensor, maxLen int) error {
	return q.attentionCoreFused(l, n, pos, maxLen, nil)
}

// attentionCoreFused is attentionCore; with counters (n·Heads zero uint32s,
// fast numerics) attn_partial and attn_combine are one launch with a tail
// per head (attn_partial_combine_fast).
func (q *Queue) attentionCoreFused(l *AttentionLayer, n int, pos Tensor, maxLen int, counters *Block) error {
	if n > l.coreRows() {
		return fmt.Errorf("cuda attention: a core of %d rows (the scratch holds %d)", n, l.coreRows())
	}
	return q.attentionCoreAt(l, 0, n, pos, maxLen, counters)
}

// attentionCoreAt is attentionCoreFused for the n projected rows from row
// from on (their proj and attn rows; n at most the core rows).
func (q *Queue) attentionCoreAt(l *AttentionLayer, from, n int, pos Tensor, maxLen int, counters *Block) error {
	g := l.G
	if maxLen <= 0 || maxLen > l.Capacity {
		maxLen = l.Capacity
	}
	nh, nkv, hd := g.Heads, g.KVHeads, g.HeadDim
	pw := g.ProjWidth()
	r := l.regions()
	proj, qn, sc, smax, part, attn, kc, vc := r.proj, r.qn, r.scores, r.smax, r.part, r.attn, r.kc, r.vc
	proj, attn = proj.At(int64(from)*int64(pw)*4), attn.At(int64(from)*int64(nh*hd)*4)
	if err := l.prep(q, q.policy(), qn, proj, pos, n); err != nil {
		return err
	}
	splits := attnSplits(n, maxLen, l.Capacity)
	if err := kernel.AttnScores(q, q.policy(), [3]int{n * nh, splits, 1}, attnThreads, tPtr(sc), tPtr(smax), tPtr(qn), tPtr(kc), tPtr(pos), l.Capacity, nh, nkv, hd, splits, float32(1/math.Sqrt(float64(hd)))); err != nil {
		return err
	}
	if counters != nil {
		if q.d.Numerics.Exact() {
			return fmt.Errorf("cuda attention: the fused step runs under fast numerics only")
		}
		if err := checkFits(counters, 0, int64(n*nh*4), "attention fused counters"); err != nil {
			return err
		}
		return kernel.AttnPartialCombineFast(q, [3]int{n * nh, splits, 1}, attnThreads, tPtr(attn), tPtr(part), tPtr(sc), tPtr(smax),
			tPtr(vc), tPtr(proj), tPtr(pos), l.Capacity, nh, nkv, hd, pw, splits, devPtr(counters))
	}
	if err := kernel.AttnPartial(q, q.policy(), [3]int{n * nh, splits, 1}, attnThreads, tPtr(part), tPtr(sc), tPtr(smax), tPtr(vc), tPtr(pos), l.Capacity, nh, nkv, hd, splits); err != nil {
		return err
	}
	return kernel.AttnCombine(q, q.policy(), [3]int{n * nh, 1, 1}, attnThreads, tPtr(attn), tPtr(part), tPtr(proj), tPtr(pos), l.Capacity, nh, hd, pw, splits)
}

// attnThreads is the block of the attention kernels.
const attnThreads = kernel.AttThreads

// prep enqueues attn_prep over n projected rows at proj (their queries normed
// and rotated into qn, their keys and values appended to the cache at pos).
func (l *AttentionLayer) prep(q *Queue, policy kernel.Policy, qn, proj, pos Tensor, n int) error {
	g, r, w := l.G, l.regions(), l.W
	return kernel.AttnPrep(q, policy, [3]int{(n + kernel.AttPrepRows - 1) / kernel.AttPrepRows, g.Heads + g.KVHeads, 1}, attnThreads, kernel.AttnPrepArgs{
		Qn: tPtr(qn), Kc: tPtr(r.kc), Vc: tPtr(r.vc), Proj: tPtr(proj), Qnorm: tPtr(w.QNorm), Knorm: tPtr(w.KNorm), Posp: tPtr(pos),
		N: n, Capacity: l.Capacity, Nh: g.Heads, Nkv: g.KVHeads, Hd: g.HeadDim, Rot: g.RotaryDim, Theta: g.ropeTheta(), Eps: g.Eps})
}

// ResetKV needs nothing: a take starts with the position at 0, and rows past
// the position are never read.

const gemmBM = kernel.GemmBm // = GEMM_TC_BM (TestGemmTileRows)

// gemmInstances are the GEMM kernels by Gemm.Kernel: name suffix ("": the
// SIMT kernels gemm_bf16 and gemm_fp8) and W rows per block (GEMM_BN, or the
// tensor-core instance's BN).
var gemmInstances = map[string]struct {
	suffix string
	bn     int
}{"simt": {"", kernel.GemmBn}, "tc16": {"_tc16", 16}, "tc32": {"_tc32", 32}}

// gemmDefault is $PROSCENIUM_GPU_GEMM: the instance every GEMM without a
// Kernel uses (benchmarks); empty: ChooseGemm's.
var gemmDefault = os.Getenv("PROSCENIUM_GPU_GEMM")

// ChooseGemm picks the instance of a GEMM with mtiles 64-row tiles of X (all
// groups together) and rows rows of W: the FP64 tensor cores, with 16-row W
// tiles when 32-row ones would leave the 132 SMs of an H200 short of two
// blocks each (2048-row outputs of a short prompt), else 32-row ones.
func ChooseGemm(mtiles, rows int) string {
	if mtiles*((rows+31)/32) < 2*132 {
		return "tc16"
	}
	return "tc32"
}

// instance returns the instance and the grid of g: an FP64 one (exact
// numerics, or a Kernel naming one: mma false, suffix "" for the SIMT
// kernels), or a tensor-core one of fast numerics (ChooseGemmFast, or a
// Kernel naming one, gemm_fast.go: mma true, suffix "p3m128n64" …). kind
// is the weights' format, "bf16" or "fp8": an FP16-part instance (FP8
// weights only) becomes its three-part BF16 twin for BF16 weights.
func (g Gemm) instance(kind string, fast bool) (suffix string, grid [3]int, mma bool, err error) {
	k := g.Kernel
	if k == "" {
		k = gemmDefault
	}
	if k == "" && fast {
		if err := gemmSplitChecked(); err != nil {
			return "", grid, false, err
		}
		k = ChooseGemmFastCols(g.N, g.Rows, g.Cols, g.Groups)
	}
	if x, ok := gemmMmaInstances[k]; ok {
		if x.f16 && kind != "fp8" {
			// f16p34's FP16-part instances take FP8 weights only: other
			// weights run the same tile and family with three BF16 parts.
			x = x.bf16Twin()
			k = x.name()
		}
		if x.splits > 0 && g.Groups > 0 {
			return "", grid, false, fmt.Errorf("cuda: %s gemm: split-K instance %s on grouped rows (dense only)", kind, k)
		}
		return k, g.mmaGrid(x), true, nil
	}
	if k == "" {
		k = ChooseGemm(g.grid(gemmBM)[0]*max(g.Groups, 1), g.Rows)
	}
	in, ok := gemmInstances[k]
	if !ok {
		return "", grid, false, fmt.Errorf("cuda: %s gemm: no instance %q (simt, tc16, tc32, or p3m{BM}n{BN}[s][q|k32b2|k64b2|k128b1][z{Z}], h2m128n{8|16|32}s{k64b2|k64b3}: gemm_fast.go; PROSCENIUM_GPU_GEMM_VARIANT is %q: \"\", q, none, or DENSE/GROUPED of them; PROSCENIUM_GPU_GEMM_GROUPED is %q: \"\", none, k32b2, k64b2, k128b1)", kind, k, gemmVariant, gemmGrouped)
	}
	return in.suffix, g.grid(in.bn), false, nil
}

func (g Gemm) check(kind string, elemBytes int, y, W, x Tensor) error {
	mats := max(g.Mats, 1)
	switch {
	case g.N <= 0 || g.Rows <= 0 || g.Cols <= 0 || g.Groups < 0:
		return fmt.Errorf("cuda: %s gemm: bad shape %+v", kind, g)
	case g.Cols%8 != 0:
		return fmt.Errorf("cuda: %s gemm: %d columns is not a multiple of 8", kind, g.Cols)
	case g.XStride != 0 && (g.XStride < g.Cols || g.XStride%4 != 0):
		return fmt.Errorf("cuda: %s gemm: x stride %d (cols %d, a multiple of 4 needed)", kind, g.XStride, g.Cols)
	case g.YStride != 0 && g.YStride < g.Rows:
		return fmt.Errorf("cuda: %s gemm: y stride %d < rows %d", kind, g.YStride, g.Rows)
	case g.Groups == 0 && (g.Ids.Block != nil || g.Offsets.Block != nil || mats != 1):
		return fmt.Errorf("cuda: %s gemm: ids, offsets or matrices given without groups", kind)
	case g.Groups > 0 && g.Offsets.Block == nil:
		return fmt.Errorf("cuda: %s gemm: %d groups without offsets", kind, g.Groups)
	case g.Groups > 0 && g.Ids.Block == nil && g.Groups > mats:
		return fmt.Errorf("cuda: %s gemm: %d groups over %d matrices without ids", kind, g.Groups, mats)
	}
	xs, ys := g.xstride(), g.ystride()
	xrows := g.xrows()
	errs := []error{
		W.fits(int64(mats)*int64(g.Rows)*int64(g.Cols)*int64(elemBytes), kind+" gemm weights"),
		x.fits((int64(xrows-1)*int64(xs)+int64(g.Cols))*4, kind+" gemm x"),
		y.fits((int64(g.N-1)*int64(ys)+int64(g.Rows))*4, kind+" gemm y"),
	}
	if x.addr()%16 != 0 || W.addr()%16 != 0 {
		errs = append(errs, fmt.Errorf("cuda: %s gemm: x and W must be 16-byte aligned", kind))
	}
	if g.Groups > 0 {
		errs = append(errs, g.Offsets.fits(int64(g.Groups+1)*4, kind+" gemm offsets"))
		if g.Ids.Block != nil {
			errs = append(errs, g.Ids.fits(int64(g.Groups)*4, kind+" gemm ids"))
		}
	}
	if g.RowIds.Block != nil {
		errs = append(errs, g.RowIds.fits(int64(g.N)*4, kind+" gemm row ids"))
	}
	return firstErr(errs...)
}

// xrows is the X rows g reads: XRows when its rows gather X rows (RowIds),
// else one a row.
func (g Gemm) xrows() int {
	if g.RowIds.Block != nil && g.XRows > 0 {
		return g.XRows
	}
	return g.N
}

func (g Gemm) xstride() int {
	if g.XStride > 0 {
		return g.XStride
	}
	return g.Cols
}

func (g Gemm) ystride() int {
	if g.YStride > 0 {
		return g.YStride
	}
	return g.Rows
}

func (g Gemm) grid(bn int) [3]int {
	rowsPerGroup, groups := g.N, 1
	if g.Groups > 0 {
		groups = g.Groups
		if g.MaxGroupRows > 0 {
			rowsPerGroup = min(g.MaxGroupRows, g.N)
		}
	}
	return [3]int{(rowsPerGroup + gemmBM - 1) / gemmBM, (g.Rows + bn - 1) / bn, groups}
}

// GemmBF16 runs the projection with BF16 weights. Ids are not range-checked
// on the device: the caller guarantees 0 ≤ id < Mats.
func (q *Queue) GemmBF16(g Gemm, y, W, x Tensor) error {
	if err := g.check("bf16", 2, y, W, x); err != nil {
		return err
	}
	suffix, grid, mma, err := g.instance("bf16", !q.d.Numerics.Exact())
	if err != nil {
		return err
	}
	mstride := int64(g.Rows) * int64(g.Cols)
	if mma {
		part, tiles, err := q.gemmSplitArgs(g, &suffix, &grid)
		if err != nil {
			return err
		}
		if k, split, scratch, ok, err := q.gemmXPartsFor(g, suffix); err != nil {
			return err
		} else if ok {
			if rows1, z := gemmXPartsTail(g.N, g.Rows, g.Cols); !split && z > 0 && k == string(kernel.GemmXpBF16M128n64q) {
				if _, ws := q.d.gemmSplitWorkspace(); ws {
					return q.gemmBF16XPartsTail(g, rows1, z, y, W, x, scratch)
				}
			}
			return q.GemmBF16XParts(k, split, grid, g, y, W, x, scratch, part, tiles)
		}
		if tiles != 0 {
			return kernel.GemmMmaBF16P3m128n64qz(q, grid, gemmMmaThreads, tPtr(y), tPtr(W), tPtr(x),
				mstride, g.N, g.Rows, g.Cols, g.xstride(), g.ystride(), tPtr(g.Offsets), tPtr(g.Ids), tPtr(g.RowIds), part, tiles)
		}
		return kernel.GemmMmaBF16(q.mmaLauncher(suffix), kernel.GemmMmaBF16Kernel("gemm_mma_bf16_"+gemmMmaInstances[suffix].kernel()), grid, gemmMmaThreads, tPtr(y), tPtr(W), tPtr(x),
			mstride, g.N, g.Rows, g.Cols, g.xstride(), g.ystride(), tPtr(g.Offsets), tPtr(g.Ids), tPtr(g.RowIds))
	}
	if suffix == "" {
		return kernel.GemmBF16(q, grid, gemmThreads, tPtr(y), tPtr(W), tPtr(x), mstride,
			g.N, g.Rows, g.Cols, g.xstride(), g.ystride(), tPtr(g.Offsets), tPtr(g.Ids), tPtr(g.RowIds))
	}
	return kernel.GemmBF16Tc(q, kernel.GemmBF16TcKernel("gemm_bf16"+suffix), grid, gemmThreads, tPtr(y), tPtr(W), tPtr(x),
		mstride, g.N, g.Rows, g.Cols, g.xstride(), g.ystride(), tPtr(g.Offsets), tPtr(g.Ids), tPtr(g.RowIds))
}

// GemmFP8 runs the projection with E4M3 weights and their float32 block
// scales S ([ceil(Rows/128), ceil(Cols/128)] per matrix, matrices one after
// another).
func (q *Queue) GemmFP8(g Gemm, y, W, S, x Tensor) error {
	if err := g.check("fp8", 1, y, W, x); err != nil {
		return err
	}
	ns := FP8ScaleCount(g.Rows, g.Cols)
	if err := S.fits(int64(max(g.Mats, 1)*ns*4), "fp8 gemm scales"); err != nil {
		return err
	}
	suffix, grid, mma, err := g.instance("fp8", !q.d.Numerics.Exact())
	if err != nil {
		return err
	}
	mstride, sstride := int64(g.Rows)*int64(g.Cols), int64(ns)
	if mma {
		part, tiles, err := q.gemmSplitArgs(g, &suffix, &grid)
		if err != nil {
			return err
		}
		if tiles != 0 {
			return kernel.GemmMmaFP8P3m128n64qz(q, grid, gemmMmaThreads, kernel.GemmMmaFP8P3m128n64qzArgs{
				Y: tPtr(y), W: tPtr(W), S: tPtr(S), X: tPtr(x), Mstride: mstride, Sstride: sstride, N: g.N, Rows: g.Rows,
				Cols: g.Cols, Xstride: g.xstride(), Ystride: g.ystride(), Offsets: tPtr(g.Offsets), Ids: tPtr(g.Ids),
				Rowids: tPtr(g.RowIds), Part: part, Tiles: tiles})
		}
		return kernel.GemmMmaFP8(q.mmaLauncher(suffix), kernel.GemmMmaFP8Kernel("gemm_mma_fp8_"+gemmMmaInstances[suffix].kernel()), grid, gemmMmaThreads, tPtr(y), tPtr(W), tPtr(S),
			tPtr(x), mstride, sstride, g.N, g.Rows, g.Cols, g.xstride(), g.ystride(), tPtr(g.Offsets), tPtr(g.Ids), tPtr(g.RowIds))
	}
	if suffix == "" {
		return kernel.GemmFP8(q, grid, gemmThreads, tPtr(y), tPtr(W), tPtr(S), tPtr(x), mstride, sstride,
			g.N, g.Rows, g.Cols, g.xstride(), g.ystride(), tPtr(g.Offsets), tPtr(g.Ids), tPtr(g.RowIds))
	}
	return kernel.GemmFP8Tc(q, kernel.GemmFP8TcKernel("gemm_fp8"+suffix), grid, gemmThreads, tPtr(y), tPtr(W), tPtr(S),
		tPtr(x), mstride, sstride, g.N, g.Rows, g.Cols, g.xstride(), g.ystride(), tPtr(g.Offsets), tPtr(g.Ids), tPtr(g.RowIds))
}

const gemmThreads = kernel.GemmThreads

// mmaLauncher launches tensor-core instance suffix: q itself, or for the
// wide instances (gemm32) with their dynamic shared memory.
func (q *Queue) mmaLauncher(suffix string) kernel.Launcher {
	if b := gemmMmaInstances[suffix].smem(); b > 0 {
		return sharedLauncher{q, b}
	}
	return q
}

// sharedLauncher launches every kernel with bytes of dynamic shared memory
// a block (device.Queue.LaunchShared raises the function's limit), as
// Queue.Launch does: what the X-parts scratch holds is forgotten first.
type sharedLauncher struct {
	q     *Queue
	bytes int
}

func (l sharedLauncher) Launch(name string, grid [3]int, block int, args ...uint64) error {
	l.q.d.forgetXParts()
	return l.q.Queue.LaunchShared(name, grid, block, l.bytes, args...)
}

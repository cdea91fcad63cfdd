//go:build cuda

package cuda

import (
	"fmt"
	"math"

	"proscenium/engine/cuda/kernel"
)

// The launches of the B-row decode step (Backbone.StepRows): B rows of B
// takes, each take's DeltaNet, conv and KV state and position in its own
// slot. Projections read each weight once for all rows (gemvx_*); the
// mixers run the one-row kernels' bodies on each row and its slot (the
// *_slots kernels), whose slot is read from device memory, so one captured
// graph serves any choice of slots.

// GemvRows describes a projection of NB rows y[b] = W·x[b] (b < NB), W one
// [Rows, Cols] BF16 matrix read once for all rows (kernels/gemv.cu gemvx_*).
type GemvRows struct {
	Rows, Cols int
	NB         int // rows of x and y: 1 < NB ≤ MaxStepRows
	XStride    int // floats between rows of x (0: Cols)
	YStride    int // floats between rows of y (0: Rows)
	Variant    GemvVariant
	// F64: the instances of rule 1 of the numerics contract (the CPU's bits).
	F64 bool
	// WeightsAhead: no kernel the PDL wait waits for writes W, so the SIMT
	// instances load their first weights before it (gemvxa_*, fast only; as
	// Gemv.WeightsAhead).
	WeightsAhead bool
	// Waited: as Gemv.Waited (not with WeightsAhead's SIMT instances).
	Waited bool
}

// backboneGemvRows returns g as a backbone projection under the device's
// numerics (ChooseGemvRows's instance; float64 sums under exact; the
// tensor-core instance under fast where gemvRowsUseMMA says so).
func (q *Queue) backboneGemvRows(g GemvRows) GemvRows {
	g.Variant, g.F64 = ChooseGemvRows(g.Rows, g.Cols, g.NB), q.d.Numerics.Exact()
	if !g.F64 && gemvRowsUseMMA(g.Rows, g.Cols, g.NB) {
		g.Variant = GemvRowsMMA
	}
	return g
}

// gemvxMMARows is the rows of W a block of gemvx_mma_bf16_fast computes
// (GEMVX_MMA_TILES tiles of 16).
const gemvxMMARows = 16 * kernel.GemvxMmaTiles

// GemvRowsBF16 runs g on x [NB rows] into y.
func (q *Queue) GemvRowsBF16(g GemvRows, y, W, x *Block) error {
	xs, ys := g.XStride, g.YStride
	if xs == 0 {
		xs = g.Cols
	}
	if ys == 0 {
		ys = g.Rows
	}
	if g.Variant == GemvRowsMMA {
		return q.gemvRowsMMA(g, xs, ys, y, W, x)
	}
	width := gemvRowsWidth(g.NB)
	switch {
	case g.Rows <= 0 || g.Cols <= 0 || g.Cols%8 != 0:
		return fmt.Errorf("cuda: bf16 gemv of rows: bad shape %+v", g)
	case g.NB < 1 || width == 0:
		return fmt.Errorf("cuda: bf16 gemv of rows: %d rows (1…%d)", g.NB, GemvRowsWidths[len(GemvRowsWidths)-1])
	case xs < g.Cols || xs%4 != 0 || ys < g.Rows:
		return fmt.Errorf("cuda: bf16 gemv of rows: strides x %d, y %d for %d × %d", xs, ys, g.Rows, g.Cols)
	case g.Variant.Rows < 1 || g.Variant.TPR < 32 || gemvThreads%g.Variant.TPR != 0:
		return fmt.Errorf("cuda: bf16 gemv of rows: no kernel variant chosen")
	}
	if err := firstErr(checkFits(W, 0, int64(g.Rows)*int64(g.Cols)*2, "bf16 gemv of rows weights"),
		checkFits(x, 0, (int64(g.NB-1)*int64(xs)+int64(g.Cols))*4, "bf16 gemv of rows x"),
		checkFits(y, 0, (int64(g.NB-1)*int64(ys)+int64(g.Rows))*4, "bf16 gemv of rows y")); err != nil {
		return err
	}
	blocks, _ := g.Variant.Grid(g.Rows)
	name := fmt.Sprintf("%sb%d", g.Variant.Name(), width)
	if g.F64 {
		return kernel.GemvxBF16d(q, kernel.GemvxBF16dKernel("gemvx_bf16d_"+name), [3]int{blocks, 1, 1}, gemvThreads,
			devPtr(y), devPtr(W), devPtr(x), xs, ys, g.NB, g.Rows, g.Cols, b2i(g.Waited))
	}
	if g.WeightsAhead { // kernels/gemv.cu compiles a gemvxa_ twin of every fast gemvx_ instance
		return kernel.GemvxaBF16(q, kernel.GemvxaBF16Kernel("gemvxa_bf16_"+name), [3]int{blocks, 1, 1}, gemvThreads,
			devPtr(y), devPtr(W), devPtr(x), xs, ys, g.NB, g.Rows, g.Cols, 0)
	}
	return kernel.GemvxBF16(q, kernel.GemvxBF16Kernel("gemvx_bf16_"+name), [3]int{blocks, 1, 1}, gemvThreads,
		devPtr(y), devPtr(W), devPtr(x), xs, ys, g.NB, g.Rows, g.Cols, b2i(g.Waited))
}

// gemvRowsMMA runs g on the tensor cores (gemvx_mma_bf16_fast: fast
// numerics, up to 8 rows, a multiple of 32 columns).
func (q *Queue) gemvRowsMMA(g GemvRows, xs, ys int, y, W, x *Block) error {
	switch {
	case g.F64:
		return fmt.Errorf("cuda: bf16 gemv of rows on the tensor cores: fast numerics only")
	case g.Rows <= 0 || g.Cols <= 0 || g.Cols%32 != 0:
		return fmt.Errorf("cuda: bf16 gemv of rows on the tensor cores: %d × %d (columns a multiple of 32)", g.Rows, g.Cols)
	case g.NB < 1 || g.NB > 8:
		return fmt.Errorf("cuda: bf16 gemv of rows on the tensor cores: %d rows (1…8)", g.NB)
	case xs < g.Cols || xs%4 != 0 || ys < g.Rows:
		return fmt.Errorf("cuda: bf16 gemv of rows on the tensor cores: strides x %d, y %d for %d × %d", xs, ys, g.Rows, g.Cols)
	}
	if err := firstErr(checkFits(W, 0, int64(g.Rows)*int64(g.Cols)*2, "bf16 gemv of rows weights"),
		checkFits(x, 0, (int64(g.NB-1)*int64(xs)+int64(g.Cols))*4, "bf16 gemv of rows x"),
		checkFits(y, 0, (int64(g.NB-1)*int64(ys)+int64(g.Rows))*4, "bf16 gemv of rows y")); err != nil {
		return err
	}
	return kernel.GemvxMmaBF16Fast(q, [3]int{(g.Rows + gemvxMMARows - 1) / gemvxMMARows, 1, 1}, gemvThreads,
		devPtr(y), devPtr(W), devPtr(x), xs, ys, g.NB, g.Rows, g.Cols, b2i(g.Waited))
}

// deltaNetInWaited reports whether a DeltaNet step of n rows runs its input
// projections as waited GEMVs (Gemv.Waited, GemvRows.Waited), letting the
// update after them start only once all their blocks have passed their own
// PDL wait (gemv.cuh pdl_entry_waited), so that every kernel before them
// has finished when the update starts and it may read before its own wait
// what they wrote: its state (docs/PERF.md "ahead25"). Under fast numerics
// and deltaNetAhead, where those projections do not load their weights
// ahead of their wait (gemvAhead's "in", not the default: such kernels let
// the next one start first). Only these projections wait so: a waited
// trigger delays the next launch (every GEMV waited made the two-take step
// 20 µs slower, run 2).
func (q *Queue) deltaNetInWaited(n int) bool {
	return deltaNetAhead && q.inProjWaitable(n)
}

// inProjWaitable reports whether a mixer's input projections of n rows may
// run waited (Gemv.Waited, GemvRows.Waited) for the kernel after them to
// read ahead of its wait: under fast numerics, where they do not load their
// weights ahead (such kernels let the next one start first).
func (q *Queue) inProjWaitable(n int) bool {
	ahead := gemvAhead[siteIn]
	if n > 1 {
		ahead = rowsAhead(siteIn, n)
	}
	return !q.d.Numerics.Exact() && !ahead
}

// attnInWaited reports whether an attention layer's step of n rows runs its
// q/k/v projections waited, so that its one-launch core
// (attn_decode_ahead_fast) reads the rows' positions and first cached keys
// and values before its wait: where the core is that launch
// (decodeApplies) and attnDecodeAhead (docs/PERF.md "dec28").
func (q *Queue) attnInWaited(l *AttentionLayer, n int, dec *Block) bool {
	return attnDecodeAhead && q.decodeApplies(l, n, dec) && q.inProjWaitable(n)
}

// rowsProjection is projection for the n ≤ MaxStepRows rows of a B-row
// step: one [rows, cols] BF16 matrix applied to n rows of x (pitch xstride;
// 0: cols) into columns col… of y (row stride ystride), each weight read
// once (the one-row GEMV for n = 1, its weights ahead where gemvAhead says
// for site).
func (q *Queue) rowsProjection(y Tensor, ystride, col int, w Tensor, x Tensor, xstride, n, rows, cols int, site gemvSite) error {
	return q.rowsProjectionWaited(y, ystride, col, w, x, xstride, n, rows, cols, site, false)
}

// rowsProjectionWaited is rowsProjection; waited: Gemv.Waited and
// GemvRows.Waited.
func (q *Queue) rowsProjectionWaited(y Tensor, ystride, col int, w Tensor, x Tensor, xstride, n, rows, cols int, site gemvSite, waited bool) error {
	if xstride == 0 {
		xstride = cols
	}
	wb, err := w.view(int64(rows)*int64(cols)*2, "projection weights")
	if err != nil {
		return err
	}
	xb, err := x.view((int64(n-1)*int64(xstride)+int64(cols))*4, "projection x")
	if err != nil {
		return err
	}
	yb, err := y.At(int64(col)*4).view((int64(n-1)*int64(ystride)+int64(rows))*4, "projection y")
	if err != nil {
		return err
	}
	if n == 1 {
		g := q.backboneGemv(Gemv{Rows: rows, Cols: cols, N: 1, Mats: 1}, false, site)
		g.Waited = waited
		return q.GemvBF16(g, yb, wb, xb)
	}
	g := q.backboneGemvRows(GemvRows{Rows: rows, Cols: cols, NB: n, XStride: xstride, YStride: ystride, WeightsAhead: rowsAhead(site, n),
		Waited: waited})
	return q.GemvRowsBF16(g, yb, wb, xb)
}

// stepSlots is where a B-row step finds each row's take: the rows' slots
// (int32 [n], copied by the host before the step), the distance between two
// slots' states in floats, and the slots' positions (int32 [Slots]).
type stepSlots struct {
	slots  Tensor
	stride int64
	pos    Tensor
}

// deltaNetStepRows is the DeltaNet mixer of a B-row step up to its output
// projection (deltaNetCore for n rows of n takes): the stacked input
// projections of the n rows, then the split step (or the cluster step,
// DeltaNetLayer.clusterStep) of each row on its slot's conv and recurrent
// state.
func (q *Queue) deltaNetStepRows(l *DeltaNetLayer, out, x Tensor, n int, s stepSlots) (mixerOut, error) {
	if err := l.check(out, x, n); err != nil {
		return mixerOut{}, err
	}
	g := l.G
	if g.KeyDim > deltaNetSplitMaxKeyDim {
		return mixerOut{}, fmt.Errorf("cuda deltanet: the B-row step takes key dims up to %d (the split step's), not %d", deltaNetSplitMaxKeyDim, g.KeyDim)
	}
	core := l.Scratch.At(g.scratchLayout(l.MaxRows))
	waited := q.deltaNetInWaited(n)
	ins, inRows := l.inputProjections()
	if err := q.stacked(func(y Tensor, ystride, col int, w Tensor, x Tensor, n, rows, cols int) error {
		return q.rowsProjectionWaited(y, ystride, col, w, x, 0, n, rows, cols, siteIn, waited)
	}, l.Scratch, ins, inRows, x, n, g.Hidden); err != nil {
		return mixerOut{}, err
	}
	if err := q.deltaNetRowsMixBehind(l, n, s, waited); err != nil {
		return mixerOut{}, err
	}
	return mixerOut{W: l.W.Out, In: core, Hidden: g.Hidden, Cols: g.ValueHeads * g.ValueDim}, nil
}

// deltaNetRowsMix is the mixer of a B-row step between the input
// projections (the n projected rows at the start of the layer's scratch)
// and out_proj (the gated-norm output core after them): the cluster step
// (one launch) or the split step (two) of each row on its slot's state.
func (q *Queue) deltaNetRowsMix(l *DeltaNetLayer, n int, s stepSlots) error {
	return q.deltaNetRowsMixBehind(l, n, s, false)
}

// deltaNetRowsMixBehind is deltaNetRowsMix; ahead is deltaNetMixBehind's
// waited (deltaNetInWaited's answer): the cluster step and the split step's
// columns then read each row's state (the cluster step also its conv window
// and weights) before their wait.
func (q *Queue) deltaNetRowsMixBehind(l *DeltaNetLayer, n int, s stepSlots, ahead bool) error {
	g := l.G
	nv := g.ValueHeads
	core := l.Scratch.At(g.scratchLayout(l.MaxRows))
	w := l.W
	stateS := l.State.At(4 * int64(g.convStateFloats()))
	if l.clusterStep(q, n) {
		a := kernel.DeltaNetStepClusterSlotsFastArgs{Core: tPtr(core), Proj: tPtr(l.Scratch), Convstate: tPtr(l.State),
			S: tPtr(stateS), Convw: tPtr(w.Conv), Dtbias: tPtr(w.DtBias), Alog: tPtr(w.ALog), Normw: tPtr(w.Norm),
			Nk: g.KeyHeads, Nv: nv, Dk: g.KeyDim, Dv: g.ValueDim, K: g.ConvKernel, Eps: g.Eps,
			Slots: tPtr(s.slots), SlotStride: s.stride}
		if ahead {
			return kernel.DeltaNetStepClusterSlotsAheadFast(q, [3]int{nv, kernel.DncCluster, n}, kernel.DncThreads, kernel.DeltaNetStepClusterSlotsAheadFastArgs(a))
		}
		return kernel.DeltaNetStepClusterSlotsFast(q, [3]int{nv, kernel.DncCluster, n}, kernel.DncThreads, a)
	}
	grid := [3]int{nv, (g.ValueDim + 31) / 32, n}
	var err error
	if ahead {
		err = kernel.DeltaNetStepColsSlotsAheadFast(q, grid, deltaNetSplitThreads, tPtr(core), tPtr(l.Scratch), tPtr(l.State),
			tPtr(stateS), tPtr(w.Conv), tPtr(w.DtBias), tPtr(w.ALog), g.KeyHeads, nv, g.KeyDim, g.ValueDim, g.ConvKernel,
			tPtr(s.slots), s.stride)
	} else {
		err = kernel.DeltaNetStepColsSlots(q, q.policy(), grid, deltaNetSplitThreads, tPtr(core), tPtr(l.Scratch), tPtr(l.State),
			tPtr(stateS), tPtr(w.Conv), tPtr(w.DtBias), tPtr(w.ALog), g.KeyHeads, nv, g.KeyDim, g.ValueDim, g.ConvKernel,
			tPtr(s.slots), s.stride)
	}
	if err != nil {
		return err
	}
	return kernel.DeltaNetStepNormSlots(q, q.policy(), [3]int{nv, 1, n}, deltaNetSplitThreads, tPtr(core), tPtr(l.Scratch),
		tPtr(l.State), tPtr(w.Norm), g.KeyHeads, nv, g.KeyDim, g.ValueDim, g.ConvKernel, g.Eps, tPtr(s.slots), s.stride)
}

// attentionStepRows is the attention mixer of a B-row step up to its output
// projection (attentionUpToOut for n rows of n takes): the stacked q, k, v
// projections of the n rows, then each row's norms, RoPE at its take's
// position, append to its take's cache and attention over that cache. With
// dec (the step's tail counters, zero) under fast the core may run as one
// launch (attentionDecode, where decodeApplies).
func (q *Queue) attentionStepRows(l *AttentionLayer, out, x Tensor, n int, s stepSlots, dec *Block) (mixerOut, error) {
	if err := l.check(out, x, n, s.pos); err != nil {
		return mixerOut{}, err
	}
	g := l.G
	nh, nkv, hd := g.Heads, g.KVHeads, g.HeadDim
	qw, kw := nh*hd, nkv*hd
	w := l.W
	waited := q.attnInWaited(l, n, dec)
	rowsProj := func(y Tensor, ystride, col int, w Tensor, x Tensor, n, rows, cols int) error {
		return q.rowsProjectionWaited(y, ystride, col, w, x, 0, n, rows, cols, siteIn, waited)
	}
	if err := q.stacked(rowsProj, l.Scratch, []Tensor{w.Q, w.K, w.V}, []int{2 * qw, kw, kw}, x, n, g.Hidden); err != nil {
		return mixerOut{}, err
	}
	if err := q.attentionCoreRows(l, n, s, dec, waited); err != nil {
		return mixerOut{}, err
	}
	return mixerOut{W: w.O, In: l.regions().attn, Hidden: g.Hidden, Cols: qw}, nil
}

// attentionCoreRows is attentionStepRows between its projections: the n
// projected rows at the start of the scratch to the gated attention in the
// attn region, by attentionDecode where decodeApplies, else by the four
// *_slots kernels. waited (attnInWaited's answer) says the launch before is
// the rows' waited q/k/v projection, so the one-launch core reads ahead of
// its wait (attentionDecode's ahead).
func (q *Queue) attentionCoreRows(l *AttentionLayer, n int, s stepSlots, dec *Block, waited bool) error {
	g := l.G
	nh, nkv, hd := g.Heads, g.KVHeads, g.HeadDim
	w := l.W
	r := l.regions()
	if q.decodeApplies(l, n, dec) {
		return q.attentionDecode(l, n, s.pos, &s, dec, waited)
	}
	proj, qn, sc, smax, part, attn, kc, vc := r.proj, r.qn, r.scores, r.smax, r.part, r.attn, r.kc, r.vc
	theta := g.ropeTheta()
	splits := maxSplits(l.Capacity) // as a one-row step: shares out the rows cached at run time
	slots, pos := tPtr(s.slots), tPtr(s.pos)
	if err := kernel.AttnPrepSlots(q, q.policy(), [3]int{1, nh + nkv, n}, attnThreads, kernel.AttnPrepSlotsArgs{
		Qn: tPtr(qn), Kc: tPtr(kc), Vc: tPtr(vc), Proj: tPtr(proj), Qnorm: tPtr(w.QNorm), Knorm: tPtr(w.KNorm), Posp: pos,
		Capacity: l.Capacity, Nh: nh, Nkv: nkv, Hd: hd, Rot: g.RotaryDim, Theta: theta, Eps: g.Eps, Slots: slots,
		SlotStride: s.stride}); err != nil {
		return err
	}
	if err := kernel.AttnScoresSlots(q, q.policy(), [3]int{nh, splits, n}, attnThreads, tPtr(sc), tPtr(smax), tPtr(qn), tPtr(kc),
		pos, l.Capacity, nh, nkv, hd, splits, float32(1/math.Sqrt(float64(hd))), slots, s.stride); err != nil {
		return err
	}
	if err := kernel.AttnPartialSlots(q, q.policy(), [3]int{nh, splits, n}, attnThreads, tPtr(part), tPtr(sc), tPtr(smax),
		tPtr(vc), pos, l.Capacity, nh, nkv, hd, splits, slots, s.stride); err != nil {
		return err
	}
	return kernel.AttnCombineSlots(q, q.policy(), [3]int{nh, 1, n}, attnThreads, tPtr(attn), tPtr(part), tPtr(proj),
		pos, l.Capacity, nh, hd, g.ProjWidth(), splits, slots)
}

// projectRows is the mixer's output projection of n rows of a B-row step.
func (o mixerOut) projectRows(q *Queue, out Tensor, n int) error {
	return q.rowsProjection(out, o.Hidden, 0, o.W, o.In, 0, n, o.Hidden, o.Cols, siteOut)
}

// AddInt32Slots adds v to the int32 of each of the n rows' slots (slots:
// int32 [n], distinct) in pos: the takes' positions, advanced by the
// captured B-row step itself.
func (q *Queue) AddInt32Slots(pos, slots Tensor, n, slotCount, v int) error {
	if err := firstErr(pos.fits(4*int64(slotCount), "slot positions"), slots.fits(4*int64(n), "row slots")); err != nil {
		return err
	}
	if n > 32 {
		return fmt.Errorf("cuda: %d rows' positions in one launch (at most 32)", n)
	}
	return kernel.AddI32Slots(q, [3]int{1, 1, 1}, 32, tPtr(pos), tPtr(slots), n, v)
}

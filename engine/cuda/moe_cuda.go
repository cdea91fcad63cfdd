//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"slices"

	"proscenium/engine/cuda/kernel"
)

// Launches of kernels/moe.cu and kernels/backbone.cu (the backbone's
// feed-forward and layer glue); each checks its buffers fit.

// rowThreads is the block of the kernels that give each of n rows one block
// (combine + norm, add + norm, the tower's norms and eh input): a single row
// gets 1024 threads, so its 2048 columns take two passes per thread instead
// of eight; many rows keep 256 (the blocks then fill the device).
func rowThreads(n int) int {
	if n < 32 {
		return 1024
	}
	return elementwiseThreads
}

// MoERoute routes n rows: softmax over the E logits at dense + t·dstride, the
// top k (ties to the lower index) renormalised, into ids and wts [n·k]. With
// xrep non-nil it also copies each row of x (pitch xpitch) k times into xrep.
func (q *Queue) MoERoute(ids, wts, dense *Block, n, dstride, E, k int, xrep, x *Block, xpitch int) error {
	if E > maxRouteExperts || k > maxRouteTopK || k > E || k < 1 {
		return fmt.Errorf("cuda: moe route: %d experts top-%d (at most %d experts, top-%d)", E, k, maxRouteExperts, maxRouteTopK)
	}
	errs := []error{checkFits(ids, 0, int64(n*k*4), "route ids"), checkFits(wts, 0, int64(n*k*4), "route weights"),
		checkFits(dense, 0, int64(((n-1)*dstride+E)*4), "route logits")}
	var xa, xra kernel.Ptr
	if xrep != nil {
		errs = append(errs, checkFits(xrep, 0, int64(n*k*xpitch*4), "route xrep"), checkFits(x, 0, int64(n*xpitch*4), "route x"))
		xa, xra = devPtr(x), devPtr(xrep)
	}
	if err := firstErr(errs...); err != nil {
		return err
	}
	return kernel.MoERoute(q, q.policy(), [3]int{n, 1, 1}, elementwiseThreads, devPtr(ids), devPtr(wts), devPtr(dense),
		dstride, E, k, xra, xa, xpitch)
}

// moeGroupThreads is the block of moe_group; it sorts up to 4× as many pairs.
const moeGroupThreads = 1024

// MoEGroupEnv picks the kernel of MoEGroup: "old" is moe_group (one warp
// ranks every pair, 24 µs a layer of a 300-row prefill), anything else
// moe_group_warps (each warp ranks its own range of pairs; docs/PERF.md
// "group34"). The same outputs, bit for bit.
const MoEGroupEnv = "PROSCENIUM_GPU_MOE_GROUP"

// moeGroupWarps: MoEGroup by moe_group_warps unless $PROSCENIUM_GPU_MOE_GROUP
// is "old" (run 3: 2.6× faster at 2 400 pairs, the same outputs).
var moeGroupWarps = os.Getenv(MoEGroupEnv) != "old"

// MoEGroup sorts the pairs (row, expert) of ids [pairs] by expert for the
// grouped GEMMs: offsets [E+1], rowids (the x row of each sorted pair) and
// slot (the sorted position of each pair), all int32. Pairs of one expert
// keep their order (a stable sort), so the result does not depend on the
// kernel or its scheduling.
func (q *Queue) MoEGroup(offsets, rowids, slot, ids *Block, pairs, k, E int) error {
	return q.MoEGroupBy(moeGroupWarps, offsets, rowids, slot, ids, pairs, k, E)
}

// MoEGroupBy is MoEGroup by moe_group_warps (warps) or moe_group (the
// tests' and the timing's A/B; MoEGroup passes $PROSCENIUM_GPU_MOE_GROUP's
// choice).
func (q *Queue) MoEGroupBy(warps bool, offsets, rowids, slot, ids *Block, pairs, k, E int) error {
	if E > maxRouteExperts || pairs > kernel.MoEGroupMaxPairs || E < 1 || k < 1 || pairs < 0 {
		return fmt.Errorf("cuda: moe group: %d pairs (top %d) over %d experts (at most %d, %d)", pairs, k, E, kernel.MoEGroupMaxPairs, maxRouteExperts)
	}
	if err := firstErr(checkFits(offsets, 0, int64(E+1)*4, "group offsets"), checkFits(rowids, 0, int64(pairs*4), "group row ids"),
		checkFits(slot, 0, int64(pairs*4), "group slots"), checkFits(ids, 0, int64(pairs*4), "group ids")); err != nil {
		return err
	}
	l := sharedLauncher{q, moeGroupShared}
	if warps {
		return kernel.MoEGroupWarps(l, [3]int{1, 1, 1}, kernel.MoEGroupThreads, devPtr(offsets), devPtr(rowids), devPtr(slot), devPtr(ids),
			pairs, k, E)
	}
	return kernel.MoEGroup(l, [3]int{1, 1, 1}, moeGroupThreads, devPtr(offsets), devPtr(rowids), devPtr(slot), devPtr(ids),
		pairs, k, E)
}

// moeGroupShared is the dynamic shared memory of both groupings' launches
// (kernels/moe.cu moe_group_dyn: a word a pair): always the most pairs'
// (64 KB), not this launch's, so that the function's limit is raised past
// 48 KB once (device.Queue.LaunchShared) whatever the pairs — a launch of
// 8 192 pairs would otherwise ask 32 KB beside moe_group_warps's 24 KB of
// static counts, past the 48 KB a block may take unraised. One block a
// launch: the reservation costs no occupancy.
const moeGroupShared = kernel.MoEGroupMaxPairs * 4

// MoESwiGLU is SwiGLU of items routed (gate, up) pairs in gu (pitch 2p: gate
// at 0, up at p; width i) into h (pitch ip, zero-padded), and of the shared
// expert of rows rows (gate at dense + r·dstride + E, up after is values)
// into hs (pitch isp, zero-padded).
func (q *Queue) MoESwiGLU(h, gu *Block, p, i, ip, items int, hs, dense *Block, rows, dstride, E, is, isp int) error {
	if err := firstErr(checkFits(h, 0, int64(items*ip*4), "swiglu h"), checkFits(gu, 0, int64(items*2*p*4), "swiglu gate/up"),
		checkFits(hs, 0, int64(rows*isp*4), "swiglu shared h"), checkFits(dense, 0, int64(((rows-1)*dstride+E+2*is)*4), "swiglu shared gate/up")); err != nil {
		return err
	}
	w := max(ip, isp)
	grid := [3]int{(w + elementwiseThreads - 1) / elementwiseThreads, items + rows, 1}
	// A prefill pass's shared down projection input: its X parts too (xp15).
	if ok, err := q.withXParts(hs.Ptr, rows, is, isp, func(xp kernel.Ptr, pstride int64, kpad int) error {
		return kernel.MoESwiGLUXpFast(q, grid, elementwiseThreads, kernel.MoESwiGLUXpFastArgs{
			H: devPtr(h), Gu: devPtr(gu), P: p, I: i, Ip: ip, Items: items, Hs: devPtr(hs), Dense: devPtr(dense),
			Dstride: dstride, E: E, Is: is, Isp: isp, Xp: xp, Pstride: pstride, Kpad: kpad})
	}); ok {
		return err
	}
	return kernel.MoESwiGLU(q, q.policy(), grid, elementwiseThreads,
		devPtr(h), devPtr(gu), p, i, ip, items, devPtr(hs), devPtr(dense), dstride, E, is, isp)
}

// MoECombineNorm adds to each of n rows of x (width H) the weighted routed
// outputs yr [n·k, H] and the shared output ys [n, H] times
// sigmoid(dense[t·dstride + sgcol]); with nw non-nil it then writes the
// zero-centred RMSNorm of x into normed (pitch npitch, zero-padded). With
// slot non-nil the routed output of pair p is row slot[p] of yr (MoEGroup's
// expert order). Under $PROSCENIUM_GPU_NORM_CLUSTER, without a slot and with
// a norm, a cluster a row (norm_cluster.go).
func (q *Queue) MoECombineNorm(x, yr, wts, ys, dense *Block, n, dstride, sgcol, H, k int, slot, normed, nw *Block, npitch int, eps float32) error {
	errs := []error{checkFits(x, 0, int64(n*H*4), "combine x"), checkFits(yr, 0, int64(n*k*H*4), "combine routed"),
		checkFits(wts, 0, int64(n*k*4), "combine weights"), checkFits(ys, 0, int64(n*H*4), "combine shared"),
		checkFits(dense, 0, int64(((n-1)*dstride+sgcol+1)*4), "combine shared gate")}
	var na, nwa kernel.Ptr
	if slot != nil {
		errs = append(errs, checkFits(slot, 0, int64(n*k*4), "combine slots"))
	}
	if nw != nil {
		errs = append(errs, checkFits(normed, 0, int64(n*npitch*4), "combine normed"), checkFits(nw, 0, int64(H*4), "combine norm weight"))
		na, nwa = devPtr(normed), devPtr(nw)
	}
	if err := firstErr(errs...); err != nil {
		return err
	}
	if slot == nil && nw != nil && q.normClusterRows(n) {
		return kernel.MoECombineNormClusterFast(q, [3]int{kernel.NormCluster, n, 1}, kernel.NormClusterThreads, devPtr(x),
			devPtr(yr), devPtr(wts), devPtr(ys), devPtr(dense), dstride, sgcol, H, k, na, nwa, npitch, eps)
	}
	if nw != nil {
		// A prefill pass's next-layer input: its X parts too (xp15).
		if ok, err := q.withXParts(normed.Ptr, n, H, npitch, func(xp kernel.Ptr, pstride int64, kpad int) error {
			return kernel.MoECombineNormXpFast(q, [3]int{n, 1, 1}, rowThreads(n), kernel.MoECombineNormXpFastArgs{
				X: devPtr(x), Yr: devPtr(yr), Wts: devPtr(wts), Ys: devPtr(ys), Dense: devPtr(dense), Dstride: dstride,
				Sgcol: sgcol, H: H, K: k, Slot: devPtr(slot), Normed: na, Nw: nwa, Npitch: npitch, Eps: eps,
				Xp: xp, Pstride: pstride, Kpad: kpad})
		}); ok {
			return err
		}
	}
	return kernel.MoECombineNorm(q, q.policy(), [3]int{n, 1, 1}, rowThreads(n), devPtr(x), devPtr(yr), devPtr(wts), devPtr(ys),
		devPtr(dense), dstride, sgcol, H, k, devPtr(slot), na, nwa, npitch, eps)
}

// BackboneRows writes n input rows into x [n, H]: row i is the BF16 table row
// toks[i] when toks[i] ≥ 0, else the float32 vector emb[i·H…]. A token id
// beyond the vocabulary writes NaN.
func (q *Queue) BackboneRows(x, table, toks, emb *Block, n, vocab, H int) error {
	if err := firstErr(checkFits(x, 0, int64(n*H*4), "rows x"), checkFits(table, 0, int64(vocab*H*2), "rows table"),
		checkFits(toks, 0, int64(n*4), "rows tokens"), checkFits(emb, 0, int64(n*H*4), "rows embeddings")); err != nil {
		return err
	}
	return kernel.BackboneRows(q, [3]int{n, 1, 1}, elementwiseThreads, devPtr(x), devPtr(table), devPtr(toks), devPtr(emb),
		vocab, H)
}

// normClusterRows reports whether q runs a norm tail of n rows as thread
// block clusters (norm_cluster.go).
func (q *Queue) normClusterRows(n int) bool {
	return normClusterRows(n, q.d.Numerics.Exact(), q.d.Info.Major)
}

// AddRMSNormZC adds y (nil: nothing) into the n rows of x (width H) and
// writes their zero-centred RMSNorm with gain w into normed (pitch npitch,
// zero-padded); under $PROSCENIUM_GPU_NORM_CLUSTER a cluster a row
// (norm_cluster.go).
func (q *Queue) AddRMSNormZC(x, y, normed, w *Block, n, H, npitch int, eps float32) error {
	errs := []error{checkFits(x, 0, int64(n*H*4), "add-norm x"), checkFits(normed, 0, int64(n*npitch*4), "add-norm out"),
		checkFits(w, 0, int64(H*4), "add-norm weight")}
	if y != nil {
		errs = append(errs, checkFits(y, 0, int64(n*H*4), "add-norm y"))
	}
	if npitch < H {
		errs = append(errs, fmt.Errorf("cuda: add-norm: pitch %d < width %d", npitch, H))
	}
	if err := firstErr(errs...); err != nil {
		return err
	}
	if q.normClusterRows(n) {
		return kernel.AddRMSNormZCClusterFast(q, [3]int{kernel.NormCluster, n, 1}, kernel.NormClusterThreads, devPtr(x),
			devPtr(y), devPtr(normed), devPtr(w), H, npitch, eps)
	}
	// A prefill pass's mixer or MoE input: its X parts too (xp15).
	if ok, err := q.withXParts(normed.Ptr, n, H, npitch, func(xp kernel.Ptr, pstride int64, kpad int) error {
		return kernel.AddRMSNormZCXpFast(q, [3]int{n, 1, 1}, rowThreads(n), devPtr(x), devPtr(y), devPtr(normed), devPtr(w),
			H, npitch, eps, xp, pstride, kpad)
	}); ok {
		return err
	}
	return kernel.AddRMSNormZC(q, q.policy(), [3]int{n, 1, 1}, rowThreads(n), devPtr(x), devPtr(y), devPtr(normed), devPtr(w),
		H, npitch, eps)
}

// moeDownMaxWidth is the widest expert input.
const moeDownMaxWidth = kernel.DownMaxx

// MoEDown is a step's routed and shared down projections in one launch:
// for pair y < k, silu(gate)·up of gu row y (pitch 2p, width i, zero to ip)
// times expert ids[y] of the packed down matrices at W + wOff ([h, ip] each,
// FP8 with float32 scales at S + sOff when fp8, else BF16); for y = k, the
// shared expert's silu(gate)·up from dense (at column e, width is) times Ws
// [h, is] BF16. Writes yr [k+1, h]. With xr's table the experts are where
// it says (an expert cache), and xr.Stats tallies the pairs. With
// moeDown2 (the default; $PROSCENIUM_GPU_MOE_DOWN2=0 not) it runs moe_down2 (the same bits).
func (q *Queue) MoEDown(yr, W, S *Block, wOff, sOff int64, fp8 bool, E int, ids, gu *Block, p, i, ip, k int, Ws, dense *Block, e, is, h int, xr ExpertRef) error {
	a, grid, err := moeDownArgs(yr, W, S, wOff, sOff, fp8, E, ids, gu, p, i, ip, k, Ws, dense, e, is, h)
	if err != nil {
		return err
	}
	if moeDown2 {
		// moe_down2's one row: the shared expert's output is yr's row k.
		return q.moeDown2(a, devPtr(yr).Add(int64(k*h*4)), 0, 1, grid[0], xr, false)
	}
	a.Xt, a.Xst = xr.down(), xr.Stats
	return kernel.MoEDown(q, q.policy(), grid, moeDownThreads, a)
}

// moeDownThreads is the block of moe_down (and moe_down_combine_fast).
const moeDownThreads = 256

// moeDownArgs checks MoEDown's buffers and returns the kernel's arguments and grid.
func moeDownArgs(yr, W, S *Block, wOff, sOff int64, fp8 bool, E int, ids, gu *Block, p, i, ip, k int, Ws, dense *Block, e, is, h int) (kernel.MoEDownArgs, [3]int, error) {
	if ip > moeDownMaxWidth || is > moeDownMaxWidth || ip%16 != 0 && fp8 || ip%8 != 0 || is%8 != 0 {
		return kernel.MoEDownArgs{}, [3]int{}, fmt.Errorf("cuda: moe down: expert widths %d and %d (multiples of %d, at most %d)", ip, is, map[bool]int{true: 16, false: 8}[fp8], moeDownMaxWidth)
	}
	elem, ns := int64(2), int64(0)
	if fp8 {
		elem, ns = 1, int64(FP8ScaleCount(h, ip))
	}
	errs := []error{checkFits(yr, 0, int64((k+1)*h*4), "moe down y"), checkFits(W, wOff, int64(E)*int64(h*ip)*elem, "moe down weights"),
		checkFits(ids, 0, int64(k*4), "moe down ids"), checkFits(gu, 0, int64(k*2*p*4), "moe down gate/up"),
		checkFits(Ws, 0, int64(h*is*2), "moe down shared weights"), checkFits(dense, 0, int64((e+2*is)*4), "moe down shared gate/up")}
	var sa kernel.Ptr
	f := 0
	if fp8 {
		errs = append(errs, checkFits(S, sOff, int64(E)*ns*4, "moe down scales"))
		sa, f = devPtr(S).Add(sOff), 1
	}
	if err := firstErr(errs...); err != nil {
		return kernel.MoEDownArgs{}, [3]int{}, err
	}
	const rowsPerBlock = (moeDownThreads / 32) * kernel.DownRows // warps × rows per warp
	return kernel.MoEDownArgs{
		Yr: devPtr(yr), W: devPtr(W).Add(wOff), S: sa, Mstride: int64(h * ip), Sstride: ns, FP8: f, Ids: devPtr(ids), Gu: devPtr(gu),
		P: p, I: i, Ip: ip, K: k, Ws: devPtr(Ws), Dense: devPtr(dense), E: e, Is: is, H: h,
	}, [3]int{(h + rowsPerBlock - 1) / rowsPerBlock, k + 1, 1}, nil
}

// routedGateUp reports whether kernels/moe.cu compiles GEMV variant v of
// the gathered gate·up projection with the routing in front (moe_gate_up_*,
// by the generated lists of its instances) for the weight format (FP8: true)
// and policy, and $PROSCENIUM_GPU_SPLIT_ROUTE does not ask for two launches.
func routedGateUp(v GemvVariant, fp8, exact bool) bool {
	if splitRoute {
		return false
	}
	n := v.Name()
	switch {
	case fp8 && exact:
		return slices.Contains(kernel.MoEGateUpFP8dKernels, kernel.MoEGateUpFP8dKernel("moe_gate_up_fp8d_"+n))
	case fp8:
		return slices.Contains(kernel.MoEGateUpFP8Kernels, kernel.MoEGateUpFP8Kernel("moe_gate_up_fp8_"+n))
	case exact:
		return slices.Contains(kernel.MoEGateUpBF16dKernels, kernel.MoEGateUpBF16dKernel("moe_gate_up_bf16d_"+n))
	}
	return slices.Contains(kernel.MoEGateUpBF16Kernels, kernel.MoEGateUpBF16Kernel("moe_gate_up_bf16_"+n))
}

// idsGateUp reports whether kernels/moe.cu compiles variant v of the
// routed gate·up without its routing (moe_gate_up_ids_*: the expert read
// from moe_route's ids) for the format and policy.
func idsGateUp(v GemvVariant, fp8, exact bool) bool {
	n := v.Name()
	switch {
	case fp8 && exact:
		return slices.Contains(kernel.MoEGateUpIdsFP8dKernels, kernel.MoEGateUpIdsFP8dKernel("moe_gate_up_ids_fp8d_"+n))
	case fp8:
		return slices.Contains(kernel.MoEGateUpIdsFP8Kernels, kernel.MoEGateUpIdsFP8Kernel("moe_gate_up_ids_fp8_"+n))
	case exact:
		return slices.Contains(kernel.MoEGateUpIdsBF16dKernels, kernel.MoEGateUpIdsBF16dKernel("moe_gate_up_ids_bf16d_"+n))
	}
	return slices.Contains(kernel.MoEGateUpIdsBF16Kernels, kernel.MoEGateUpIdsBF16Kernel("moe_gate_up_ids_bf16_"+n))
}

// splitRoute is $PROSCENIUM_GPU_SPLIT_ROUTE = 1: a step's routing and
// gate·up projection as two launches (MoERoute, then the gathered GEMV)
// instead of MoEGateUpRoute's one (benchmarks: the A/B of the two).
var splitRoute = os.Getenv("PROSCENIUM_GPU_SPLIT_ROUTE") == "1"

// splitRouteRows (the default; $PROSCENIUM_GPU_SPLIT_ROUTE=0 or 1 turns it
// off, 1 splitting every step instead): for a B-row step
// of n > 1 rows, MoEGateUpRoute runs moe_route (one block a row, no copies
// of x) and then the gate·up instance without the routing
// (moe_gate_up_ids_*, reading each pair's expert from ids) (moe32): there
// the routed gate·up's grid runs in several waves (1024 blocks at B = 4,
// two an SM) and every block routes its row again before its first weight
// load (≈ 1 000 instructions of one warp and an L2 read of the logits, the
// other warps at the barrier; docs/PERF.md step27b's open question,
// "moe32"). The one-take step keeps the routing inside. Session 11's run
// 2: the step of four takes 3.84 → 3.68 ms with moe_down2, of eight 6.11 →
// 5.70, the same bits.
var splitRouteRows = os.Getenv("PROSCENIUM_GPU_SPLIT_ROUTE") != "0" && os.Getenv("PROSCENIUM_GPU_SPLIT_ROUTE") != "1"

// routeSplit reports whether MoEGateUpRoute routes n rows in a launch of its
// own, moe_route, before the gate·up by ids (which lets the launch after it
// start only once all its blocks passed their wait: moe_route has finished
// by then, so that launch may read the ids before its own wait).
func routeSplit(n int) bool { return splitRouteRows && n > 1 }

// MoEGateUpRoute is MoERoute of n rows (no xrep) and the gathered gate·up
// GEMV g of their n·k (row, expert) pairs in one launch: pair t·k + j reads
// row t of x (pitch xpitch) and the matrix of row t's j-th expert, and gu
// [n·k, g.Rows], ids and wts [n·k] get the values the two launches write
// (the same kernel bodies). g gives the shape, the matrices (W from g.WOff,
// FP8 scales S from g.SOff; S nil for BF16; or where g.Table, an expert
// cache's table at the gate·up part, says) and the instance; ok is false,
// with nothing enqueued, when that instance is not compiled with the
// routing (the caller then runs the two launches). Under
// splitRouteRows (the default), n > 1 rows take two launches of the same
// bits instead.
func (q *Queue) MoEGateUpRoute(g Gemv, gu, ids, wts, dense *Block, n, dstride, E, k int, W, S, x *Block, xpitch int) (ok bool, err error) {
	fp8, exact := S != nil, q.d.Numerics.Exact()
	split := routeSplit(n)
	if !routedGateUp(g.Variant, fp8, exact) || split && !idsGateUp(g.Variant, fp8, exact) {
		return false, nil
	}
	if E > maxRouteExperts || k > maxRouteTopK || k > E || k < 1 {
		return false, fmt.Errorf("cuda: moe gate·up route: %d experts top-%d (at most %d experts, top-%d)", E, k, maxRouteExperts, maxRouteTopK)
	}
	elem := int64(2)
	if fp8 {
		elem = 1
	}
	if g.N != n*k || g.Cols%int(16/elem) != 0 || xpitch < g.Cols {
		return false, fmt.Errorf("cuda: moe gate·up route: %d pairs of %d rows top-%d, %d columns (multiple of %d), x pitch %d", g.N, n, k, g.Cols, 16/elem, xpitch)
	}
	mstride := int64(g.Rows) * int64(g.Cols)
	errs := []error{checkFits(gu, 0, int64(g.N*g.Rows*4), "gate·up out"), checkFits(ids, 0, int64(g.N*4), "route ids"),
		checkFits(wts, 0, int64(g.N*4), "route weights"), checkFits(dense, 0, int64(((n-1)*dstride+E)*4), "route logits"),
		checkFits(x, 0, int64(((n-1)*xpitch+g.Cols)*4), "gate·up x"), checkFits(W, g.WOff, int64(E)*mstride*elem, "gate·up weights")}
	var sa kernel.Ptr
	sstride := int64(0)
	if fp8 {
		sstride = int64(FP8ScaleCount(g.Rows, g.Cols))
		errs = append(errs, checkFits(S, g.SOff, int64(E)*sstride*4, "gate·up scales"))
		sa = devPtr(S).Add(g.SOff)
	}
	if err := firstErr(errs...); err != nil {
		return false, err
	}
	blocks, _ := g.Variant.Grid(g.Rows)
	grid, v := [3]int{blocks, g.N, 1}, g.Variant.Name()
	// The four instance families share one signature (BF16's S unused).
	a := kernel.MoEGateUpFP8Args{Gu: devPtr(gu), Ids: devPtr(ids), Wts: devPtr(wts), W: devPtr(W).Add(g.WOff), S: sa,
		Mstride: mstride, Sstride: sstride, Dense: devPtr(dense), Dstride: dstride, E: E, K: k, X: devPtr(x),
		Xpitch: xpitch, Rows: g.Rows, Cols: g.Cols, Xt: g.Table}
	if split {
		// moe_route's choice (no copies of x), then the instance without the routing.
		if err := q.MoERoute(ids, wts, dense, n, dstride, E, k, nil, nil, xpitch); err != nil {
			return false, err
		}
		switch {
		case fp8 && exact:
			err = kernel.MoEGateUpIdsFP8d(q, kernel.MoEGateUpIdsFP8dKernel("moe_gate_up_ids_fp8d_"+v), grid, gemvThreads, kernel.MoEGateUpIdsFP8dArgs(a))
		case fp8:
			err = kernel.MoEGateUpIdsFP8(q, kernel.MoEGateUpIdsFP8Kernel("moe_gate_up_ids_fp8_"+v), grid, gemvThreads, kernel.MoEGateUpIdsFP8Args(a))
		case exact:
			err = kernel.MoEGateUpIdsBF16d(q, kernel.MoEGateUpIdsBF16dKernel("moe_gate_up_ids_bf16d_"+v), grid, gemvThreads, kernel.MoEGateUpIdsBF16dArgs(a))
		default:
			err = kernel.MoEGateUpIdsBF16(q, kernel.MoEGateUpIdsBF16Kernel("moe_gate_up_ids_bf16_"+v), grid, gemvThreads, kernel.MoEGateUpIdsBF16Args(a))
		}
		return err == nil, err
	}
	switch {
	case fp8 && exact:
		err = kernel.MoEGateUpFP8d(q, kernel.MoEGateUpFP8dKernel("moe_gate_up_fp8d_"+v), grid, gemvThreads, kernel.MoEGateUpFP8dArgs(a))
	case fp8:
		err = kernel.MoEGateUpFP8(q, kernel.MoEGateUpFP8Kernel("moe_gate_up_fp8_"+v), grid, gemvThreads, a)
	case exact:
		err = kernel.MoEGateUpBF16d(q, kernel.MoEGateUpBF16dKernel("moe_gate_up_bf16d_"+v), grid, gemvThreads, kernel.MoEGateUpBF16dArgs(a))
	default:
		err = kernel.MoEGateUpBF16(q, kernel.MoEGateUpBF16Kernel("moe_gate_up_bf16_"+v), grid, gemvThreads, kernel.MoEGateUpBF16Args(a))
	}
	return err == nil, err
}

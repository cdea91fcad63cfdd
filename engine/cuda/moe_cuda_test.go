//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/cuda/kernel"
)

// Device tests of kernels/moe.cu and kernels/backbone.cu against their
// engine/cpu references (random non-zero inputs, NaN-poisoned outputs).

// TestMoERoute checks moe_route under both policies: exact against
// cpu.Route's ids and bits; fast (the k largest logits weighted by their own
// softmax) against routeLogitsRef, a float64 reference of that definition,
// and against cpu.Route's weights within 1e-5 wherever the two choose the
// same experts in the same order.
func TestMoERoute(t *testing.T) { eachNumerics(t, testMoERoute) }

// routeLogitsRef is fast routing in float64: the k largest logits (ties to
// the lower index) and the softmax of those k.
func routeLogitsRef(logits []float32, k int) ([]int, []float32) {
	idx := make([]int, len(logits))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return logits[idx[a]] > logits[idx[b]] })
	idx = idx[:k]
	var sum float64
	e := make([]float64, k)
	for j, i := range idx {
		e[j] = math.Exp(float64(logits[i]) - float64(logits[idx[0]]))
		sum += e[j]
	}
	w := make([]float32, k)
	for j := range w {
		w[j] = float32(e[j] / sum)
	}
	return idx, w
}

func testMoERoute(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct{ n, E, k, stride, pitch int }{{1, 256, 8, 1281, 2048}, {60, 256, 8, 1281, 64}, {5, 6, 3, 120, 144}, {64, 8, 4, 201, 64}, {3, 512, 10, 600, 32}} {
		t.Run(fmt.Sprintf("%drows_%dexperts_top%d", c.n, c.E, c.k), func(t *testing.T) {
			dense := randNonZero(r, c.n*c.stride)
			for i := range dense {
				dense[i] *= 4
			}
			// A tie in every row: two equal largest logits, the lower index
			// must come first; and near-ties: logits one float32 step apart
			// (their probabilities may round equal or not: the device must
			// decide as the CPU does, so its softmax must have the CPU's bits).
			for row := 0; row < c.n; row++ {
				a, b := r.IntN(c.E), r.IntN(c.E)
				dense[row*c.stride+a], dense[row*c.stride+b] = 9, 9
				for j := 0; j < c.k/2; j++ {
					a, b := r.IntN(c.E), r.IntN(c.E)
					v := float32(r.NormFloat64() * 4)
					dense[row*c.stride+a], dense[row*c.stride+b] = v, math.Nextafter32(v, 100)
				}
			}
			x := randNonZero(r, c.n*c.pitch)
			ids, wts := poisoned(t, c.n*c.k), poisoned(t, c.n*c.k)
			xrep := poisoned(t, c.n*c.k*c.pitch)
			db, xb := upload(t, dense), upload(t, x)
			if err := dev.Run(func(q *Queue) error {
				return q.MoERoute(ids, wts, db, c.n, c.stride, c.E, c.k, xrep, xb, c.pitch)
			}); err != nil {
				t.Fatal(err)
			}
			if err := dev.Sync(); err != nil {
				t.Fatal(err)
			}
			gotIDs := make([]int32, c.n*c.k)
			if err := Download(dev, gotIDs, ids, 0); err != nil {
				t.Fatal(err)
			}
			gotW := download(t, wts, c.n*c.k)
			// Fast routings of k > kernel.RouteList take the exact path.
			fastLogits := !dev.Numerics.Exact() && c.k <= kernel.RouteList
			var refW, cpuW, gotSame []float32
			for row := 0; row < c.n; row++ {
				logits := dense[row*c.stride : row*c.stride+c.E]
				refIdx, w := cpu.Route(logits, c.k)
				if fastLogits {
					cpuIdx, cw := refIdx, w
					refIdx, w = routeLogitsRef(logits, c.k)
					if slices.Equal(cpuIdx, refIdx) {
						cpuW = append(cpuW, cw...)
						gotSame = append(gotSame, gotW[row*c.k:(row+1)*c.k]...)
					}
				}
				for j, e := range refIdx {
					if int(gotIDs[row*c.k+j]) != e {
						t.Fatalf("row %d choice %d: expert %d, reference %d (all: %v)", row, j, gotIDs[row*c.k+j], e, refIdx)
					}
				}
				refW = append(refW, w...)
			}
			if !fastLogits {
				checkClose(t, "route weights", gotW, refW, 1e-6)
				checkCPUBits(t, "route weights", gotW, refW)
			} else {
				checkClose(t, "route weights (fast)", gotW, refW, 1e-5)
				t.Logf("%d of %d rows choose as the CPU does", len(cpuW)/c.k, c.n)
				checkClose(t, "route weights (fast) against the CPU's", gotSame, cpuW, 1e-5)
			}
			var refX []float32
			for row := 0; row < c.n; row++ {
				for j := 0; j < c.k; j++ {
					refX = append(refX, x[row*c.pitch:(row+1)*c.pitch]...)
				}
			}
			checkClose(t, "route xrep", download(t, xrep, len(refX)), refX, 0)
		})
	}
}

// TestMoEGroup runs both groupings, moe_group and moe_group_warps, over
// moeGroupCases (prefill-like routings and adversarial inputs, 1 to 16 384
// pairs, 1 to 1024 experts), each output poisoned first: each must equal
// the definition (a stable sort by expert, moeGroupRef), so the two equal
// each other bit for bit.
func TestMoEGroup(t *testing.T) {
	r := newRand(t)
	cs := moeGroupCases(r, !testing.Short())
	for _, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			pairs := len(c.ids)
			off, rowids, slot := alloc(t, (c.E+1)*4), alloc(t, max(pairs, 1)*4), alloc(t, max(pairs, 1)*4)
			idb := alloc(t, max(pairs, 1)*4)
			if pairs > 0 {
				if err := Upload(dev, idb, 0, c.ids); err != nil {
					t.Fatal(err)
				}
			}
			wo, wr, ws := moeGroupRef(c.ids, c.k, c.E)
			for _, warps := range []bool{false, true} {
				for _, b := range []*Block{off, rowids, slot} {
					if err := dev.Fill32(b, 0xffffffff); err != nil {
						t.Fatal(err)
					}
				}
				if err := dev.Run(func(q *Queue) error { return q.MoEGroupBy(warps, off, rowids, slot, idb, pairs, c.k, c.E) }); err != nil {
					t.Fatal(err)
				}
				if err := dev.Sync(); err != nil {
					t.Fatal(err)
				}
				gotOff, gotRow, gotSlot := make([]int32, c.E+1), make([]int32, pairs), make([]int32, pairs)
				for _, d := range []struct {
					dst []int32
					b   *Block
				}{{gotOff, off}, {gotRow, rowids}, {gotSlot, slot}} {
					if err := Download(dev, d.dst, d.b, 0); err != nil {
						t.Fatal(err)
					}
				}
				if err := moeGroupSame(gotOff, gotRow, gotSlot, wo, wr, ws, c.ids); err != nil {
					t.Fatalf("%s: %v", map[bool]string{false: "moe_group", true: "moe_group_warps"}[warps], err)
				}
			}
		})
	}
}

// TestMoEGroupTiming prints the device time of one grouping, moe_group
// against moe_group_warps, for a prefill's pairs over Drama 3's 256
// experts top 8 (60, 300, 512, 746 and 2048 rows: 480 to 16 384 pairs): reps
// launches, each on another routing, captured as one graph (PDL edges, as
// in the prefill's graph, where each kernel waits for the one before it) and
// replayed; the mean a launch over the better of two timings of the
// replays, so the host's launch rate does not bound a kernel of a few µs.
// Nothing is asserted; TestMoEGroup checks the outputs.
func TestMoEGroupTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	r := newRand(t)
	const reps, replays, E, k = 100, 5, 256, 8
	for _, rows := range []int{60, 300, 512, 746, 2048} {
		pairs := rows * k
		var ids []int32
		for range reps * rows {
			ids = append(ids, distinctIDs(r, k, E)...)
		}
		idb := upload(t, ids)
		off, rowids, slot := alloc(t, (E+1)*4), alloc(t, pairs*4), alloc(t, pairs*4)
		us := map[bool]float64{}
		for _, warps := range []bool{false, true} {
			var graph *Graph
			if err := dev.Run(func(q *Queue) (err error) {
				graph, err = q.Capture(func(q *Queue) error {
					for i := 0; i < reps; i++ {
						ib := &Block{Kind: idb.Kind, Ptr: idb.Ptr + uintptr(i*pairs*4), Bytes: int64(pairs * 4)}
						if err := q.MoEGroupBy(warps, off, rowids, slot, ib, pairs, k, E); err != nil {
							return err
						}
					}
					return nil
				})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if err := dev.Run(func(q *Queue) error { return q.LaunchGraph(graph) }); err != nil { // warm-up
				t.Fatal(err)
			}
			for range 2 {
				ms, err := dev.Time(func(q *Queue) error {
					for i := 0; i < replays; i++ {
						if err := q.LaunchGraph(graph); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if v := 1000 * ms / (reps * replays); us[warps] == 0 || v < us[warps] {
					us[warps] = v
				}
			}
			dev.Run(func(q *Queue) error { graph.Destroy(); return nil })
		}
		fmt.Printf("timing moe group %4d pairs over %d experts: moe_group %6.2f µs, moe_group_warps %6.2f µs (%.1f×)\n",
			pairs, E, us[false], us[true], us[false]/us[true])
	}
}

func TestMoESwiGLU(t *testing.T) { eachNumerics(t, testMoESwiGLU) }

func testMoESwiGLU(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct{ items, p, i, ip, rows, E, is, stride int }{{8, 512, 512, 512, 1, 256, 512, 1281}, {15, 128, 40, 48, 5, 6, 56, 130}} {
		t.Run(fmt.Sprintf("%ditems_i%d_shared%d", c.items, c.i, c.is), func(t *testing.T) {
			gu := randNonZero(r, c.items*2*c.p)
			dense := randNonZero(r, c.rows*c.stride)
			for i := range gu {
				gu[i] *= 8
			}
			h, hs := poisoned(t, c.items*c.ip), poisoned(t, c.rows*c.is)
			gb, db := upload(t, gu), upload(t, dense)
			if err := dev.Run(func(q *Queue) error {
				return q.MoESwiGLU(h, gb, c.p, c.i, c.ip, c.items, hs, db, c.rows, c.stride, c.E, c.is, c.is)
			}); err != nil {
				t.Fatal(err)
			}
			ref := make([]float32, c.items*c.ip)
			for e := 0; e < c.items; e++ {
				cpu.SwiGLU(ref[e*c.ip:e*c.ip+c.i], gu[e*2*c.p:e*2*c.p+c.i], gu[e*2*c.p+c.p:e*2*c.p+c.p+c.i])
			}
			got := download(t, h, len(ref))
			checkClose(t, "routed swiglu", got, ref, 1e-6)
			checkBitsIfExact(t, "routed swiglu", got, ref)
			refS := make([]float32, c.rows*c.is)
			for row := 0; row < c.rows; row++ {
				d := dense[row*c.stride+c.E:]
				cpu.SwiGLU(refS[row*c.is:(row+1)*c.is], d[:c.is], d[c.is:2*c.is])
			}
			gotS := download(t, hs, len(refS))
			checkClose(t, "shared swiglu", gotS, refS, 1e-6)
			checkBitsIfExact(t, "shared swiglu", gotS, refS)
		})
	}
}

func TestMoECombineNorm(t *testing.T) { eachNumerics(t, testMoECombineNorm) }

func testMoECombineNorm(t *testing.T) {
	r := newRand(t)
	// noSlot: routed pair p at row p (the step's layout; with
	// $PROSCENIUM_GPU_NORM_CLUSTER the cluster kernel's case).
	for _, c := range []struct {
		n, H, k, stride, sgcol, pitch int
		noSlot                        bool
	}{{1, 2048, 8, 1281, 1280, 2048, false}, {60, 2048, 8, 1281, 1280, 2048, false}, {5, 136, 3, 119, 118, 144, false},
		{1, 2048, 8, 1281, 1280, 2048, true}, {4, 2048, 8, 1281, 1280, 2048, true}, {5, 136, 3, 119, 118, 144, true}} {
		t.Run(fmt.Sprintf("%drows_%dwide_noslot%v", c.n, c.H, c.noSlot), func(t *testing.T) {
			x, yr, ys := randNonZero(r, c.n*c.H), randNonZero(r, c.n*c.k*c.H), randNonZero(r, c.n*c.H)
			wts, dense, nw := randNonZero(r, c.n*c.k), randNonZero(r, c.n*c.stride), randNonZero(r, c.H)
			// The routed outputs in a shuffled (expert) order: pair p at row slot[p].
			perm := r.Perm(c.n * c.k)
			if c.noSlot {
				for i := range perm {
					perm[i] = i
				}
			}
			slot := make([]int32, len(perm))
			yrs := make([]float32, len(yr))
			for pr, s := range perm {
				slot[pr] = int32(s)
				copy(yrs[s*c.H:(s+1)*c.H], yr[pr*c.H:(pr+1)*c.H])
			}
			xb := upload(t, x)
			normed := poisoned(t, c.n*c.pitch)
			yrb, wb, ysb, db, sb, nwb := upload(t, yrs), upload(t, wts), upload(t, ys), upload(t, dense), upload(t, slot), upload(t, nw)
			if c.noSlot {
				sb = nil
			}
			if err := dev.Run(func(q *Queue) error {
				return q.MoECombineNorm(xb, yrb, wb, ysb, db, c.n, c.stride, c.sgcol, c.H, c.k, sb, normed, nwb, c.pitch, 1e-6)
			}); err != nil {
				t.Fatal(err)
			}
			refX, refN := combineNormRef(x, yr, wts, ys, dense, nw, c.n, c.H, c.k, c.stride, c.sgcol, c.pitch)
			gotX, gotN := download(t, xb, len(refX)), download(t, normed, len(refN))
			checkClose(t, "combine x", gotX, refX, 1e-6)
			checkClose(t, "combine normed", gotN, refN, 1e-6)
			checkBitsIfExact(t, "combine x", gotX, refX)
			checkBitsIfExact(t, "combine normed", gotN, refN)
		})
	}
}

func TestBackboneRowsAndAddNorm(t *testing.T) { eachNumerics(t, testBackboneRowsAndAddNorm) }

func testBackboneRowsAndAddNorm(t *testing.T) {
	r := newRand(t)
	const n, H, V = 6, 136, 50
	table := bf16s(randNonZero(r, V*H))
	emb := randNonZero(r, n*H)
	toks := []int32{3, -1, 49, 0, -1, 7}
	x := poisoned(t, n*H)
	tb, kb, eb := upload(t, table), upload(t, toks), upload(t, emb)
	if err := dev.Run(func(q *Queue) error { return q.BackboneRows(x, tb, kb, eb, n, V, H) }); err != nil {
		t.Fatal(err)
	}
	tf := bf16ToF32(table)
	ref := make([]float32, n*H)
	for i, id := range toks {
		if id < 0 {
			copy(ref[i*H:], emb[i*H:(i+1)*H])
		} else {
			cpu.GatherRows(ref[i*H:(i+1)*H], tf, []int{int(id)}, H)
		}
	}
	checkClose(t, "rows", download(t, x, n*H), ref, 0)

	y, w := randNonZero(r, n*H), randNonZero(r, H)
	const pitch = 144
	normed := poisoned(t, n*pitch)
	yb, wb := upload(t, y), upload(t, w)
	if err := dev.Run(func(q *Queue) error { return q.AddRMSNormZC(x, yb, normed, wb, n, H, pitch, 1e-6) }); err != nil {
		t.Fatal(err)
	}
	cpu.Add(ref, y)
	refN := make([]float32, n*pitch)
	for i := 0; i < n; i++ {
		cpu.RMSNormZeroCentred(refN[i*pitch:i*pitch+H], ref[i*H:(i+1)*H], w, 1e-6)
	}
	checkClose(t, "add", download(t, x, n*H), ref, 0)
	gotN := download(t, normed, len(refN))
	checkClose(t, "add-norm", gotN, refN, 1e-6)
	checkBitsIfExact(t, "add-norm", gotN, refN)
	if v := gotN[pitch-1]; v != 0 || math.IsNaN(float64(v)) {
		t.Fatalf("padding = %v, want 0", v)
	}
	// The backbone's widths: one row (1024 threads) and a prefill's 60.
	for _, rows := range []int{1, 60} {
		const H = 2048
		x, y, w := randNonZero(r, rows*H), randNonZero(r, rows*H), randNonZero(r, H)
		xb, yb, wb := upload(t, x), upload(t, y), upload(t, w)
		normed := poisoned(t, rows*H)
		if err := dev.Run(func(q *Queue) error { return q.AddRMSNormZC(xb, yb, normed, wb, rows, H, H, 1e-6) }); err != nil {
			t.Fatal(err)
		}
		cpu.Add(x, y)
		refN := make([]float32, rows*H)
		for i := 0; i < rows; i++ {
			cpu.RMSNormZeroCentred(refN[i*H:(i+1)*H], x[i*H:(i+1)*H], w, 1e-6)
		}
		checkBitsIfExact(t, fmt.Sprintf("add-norm %dx%d", rows, H), download(t, normed, rows*H), refN)
	}
}

func TestMoEDown(t *testing.T) { eachNumerics(t, testMoEDown) }

func testMoEDown(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		fp8                      bool
		h, i, ip, p, e, k, is, E int
		bigScales                bool // some scales ≥ 2⁸: fp8x16_scaled_fold's unfolded path
	}{
		{true, 2048, 512, 512, 512, 20, 8, 512, 1281 - 1024, false},
		{true, 136, 40, 48, 128, 6, 3, 56, 6, false},
		{true, 300, 200, 208, 256, 6, 3, 56, 6, true},
		{false, 136, 40, 40, 40, 6, 3, 56, 6, false},
	} {
		t.Run(fmt.Sprintf("fp8_%v_%dx%d_big_%v", c.fp8, c.h, c.i, c.bigScales), func(t *testing.T) {
			per := c.h * c.ip
			var W, S *Block
			mats := make([][]float32, c.e) // dequantised [h, ip]
			if c.fp8 {
				ns := FP8ScaleCount(c.h, c.ip)
				wq := randFP8(r, c.e*per)
				sc := make([]float32, c.e*ns)
				for i := range sc {
					sc[i] = float32(1e-3 * (1 + 9*r.Float64()))
					if c.bigScales && i%3 == 1 {
						sc[i] = float32(256 + 700*r.Float64())
					}
				}
				for m := range mats {
					mats[m] = checkpoint.DequantFP8Blocks(wq[m*per:(m+1)*per], c.h, c.ip, sc[m*ns:(m+1)*ns], FP8Block)
				}
				W, S = upload(t, wq), upload(t, sc)
			} else {
				wh := bf16s(randNonZero(r, c.e*per))
				wf := bf16ToF32(wh)
				for m := range mats {
					mats[m] = wf[m*per : (m+1)*per]
				}
				W, S = upload(t, wh), nil
			}
			sh := bf16s(randNonZero(r, c.h*c.is))
			ids := distinctIDs(r, c.k, c.e)
			gu := randNonZero(r, c.k*2*c.p)
			dense := randNonZero(r, c.E+2*c.is)
			y := poisoned(t, (c.k+1)*c.h)
			idb, gub, shb, db := upload(t, ids), upload(t, gu), upload(t, sh), upload(t, dense)
			if err := dev.Run(func(q *Queue) error {
				return q.MoEDown(y, W, S, 0, 0, c.fp8, c.e, idb, gub, c.p, c.i, c.ip, c.k, shb, db, c.E, c.is, c.h, ExpertRef{})
			}); err != nil {
				t.Fatal(err)
			}
			ref := make([]float32, (c.k+1)*c.h)
			for j := 0; j < c.k; j++ {
				x := make([]float32, c.ip)
				cpu.SwiGLU(x[:c.i], gu[j*2*c.p:j*2*c.p+c.i], gu[j*2*c.p+c.p:j*2*c.p+c.p+c.i])
				cpu.MatVec(ref[j*c.h:(j+1)*c.h], mats[ids[j]], x, c.h, c.ip)
			}
			x := make([]float32, c.is)
			cpu.SwiGLU(x, dense[c.E:c.E+c.is], dense[c.E+c.is:c.E+2*c.is])
			cpu.MatVec(ref[c.k*c.h:], bf16ToF32(sh), x, c.h, c.is)
			got := download(t, y, len(ref))
			checkClose(t, "moe down", got, ref, 1e-5)
			checkProjBitsIfExact(t, "moe down", got, ref)
		})
	}
}

// TestMoEGateUpRoute checks the routing fused in front of the gate·up GEMV
// (moe_gate_up_*) against the two launches it replaces, MoERoute and the
// gathered GEMV on each row's copies (each checked against engine/cpu by
// TestMoERoute and TestGemvFP8/BF16): ids, weights and every output the
// same bits, under both policies, for each compiled instance the choosers
// give (FP8: t32r4u4 at Drama 3's 2048 → 1024 × 8 experts, t32r8u1 for
// short rows; BF16: t128r2u2, t32r4u2), one row and several; with the
// experts as laid out and through an expert cache's table
// (kernels/expert_addr.cuh: elsewhere, in another order, some marked as
// host-read), which gives the bits of the layout.
func TestMoEGateUpRoute(t *testing.T) { eachNumerics(t, testMoEGateUpRoute) }

// gateUpRouted is what MoEGateUpRoute, or the two launches it replaces,
// wrote.
type gateUpRouted struct {
	ids     []int32
	wts, gu []float32
}

func testMoEGateUpRoute(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		fp8                 bool
		E, k, rows, cols, n int
	}{
		{true, 16, 8, 1024, 2048, 1}, {true, 16, 8, 1024, 2048, 3}, {true, 6, 3, 64, 256, 2},
		{false, 8, 2, 128, 1024, 1}, {false, 8, 4, 256, 512, 2},
	} {
		t.Run(fmt.Sprintf("fp8=%v_%dexperts_top%d_%dx%d_%drows", c.fp8, c.E, c.k, c.rows, c.cols, c.n), func(t *testing.T) {
			per, ns := c.rows*c.cols, 0
			var wb []uint8
			var scales []float32
			var S *Block
			if c.fp8 {
				ns = FP8ScaleCount(c.rows, c.cols)
				scales = make([]float32, c.E*ns)
				for i := range scales {
					scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
				}
				wb, S = randFP8(r, c.E*per), upload(t, scales)
			} else {
				wb = bf16Bytes(bf16s(randNonZero(r, c.E*per)))
			}
			W := upload(t, wb)
			table := tabledExperts(t, wb, scales, c.E, len(wb)/c.E, ns)
			dstride, xpitch := c.E+5, c.cols+16
			dense := randNonZero(r, c.n*dstride)
			for i := range dense {
				dense[i] *= 4
			}
			db, xb := upload(t, dense), upload(t, randNonZero(r, c.n*xpitch))
			nk := c.n * c.k
			// route runs MoEGateUpRoute and the two launches over the
			// experts as laid out (xr zero) or through xr's table.
			route := func(xr ExpertRef) (routed, split gateUpRouted) {
				ids, wts, gu := poisoned(t, nk), poisoned(t, nk), poisoned(t, nk*c.rows)
				refIDs, refW, refGU, xrep := poisoned(t, nk), poisoned(t, nk), poisoned(t, nk*c.rows), poisoned(t, nk*xpitch)
				var ok bool
				if err := dev.Run(func(q *Queue) error {
					g := q.backboneGemv(Gemv{Rows: c.rows, Cols: c.cols, N: nk, Ids: refIDs, Mats: c.E, XStride: xpitch, Table: xr.gateUp()}, c.fp8, siteOther)
					var err error
					if ok, err = q.MoEGateUpRoute(g, gu, ids, wts, db, c.n, dstride, c.E, c.k, W, S, xb, xpitch); err != nil {
						return err
					}
					if err := q.MoERoute(refIDs, refW, db, c.n, dstride, c.E, c.k, xrep, xb, xpitch); err != nil {
						return err
					}
					if c.fp8 {
						return q.GemvFP8(g, refGU, W, S, xrep)
					}
					return q.GemvBF16(g, refGU, W, xrep)
				}); err != nil {
					t.Fatal(err)
				}
				if !ok {
					t.Fatal("no moe_gate_up instance for the chosen GEMV")
				}
				get := func(ids, wts, gu *Block) gateUpRouted {
					v := gateUpRouted{ids: make([]int32, nk), wts: download(t, wts, nk), gu: download(t, gu, nk*c.rows)}
					if err := Download(dev, v.ids, ids, 0); err != nil {
						t.Fatal(err)
					}
					return v
				}
				return get(ids, wts, gu), get(refIDs, refW, refGU)
			}
			same := func(what string, got, want gateUpRouted) {
				t.Helper()
				if !slices.Equal(got.ids, want.ids) {
					t.Fatalf("%s: ids %v, want %v", what, got.ids, want.ids)
				}
				for _, v := range []struct {
					part      string
					got, want []float32
				}{{"weights", got.wts, want.wts}, {"gate·up", got.gu, want.gu}} {
					if differ, maxULP := ULPDiff(v.got, v.want); differ != 0 {
						t.Errorf("%s: %s: %d of %d differ (max %d ULP)", what, v.part, differ, len(v.want), maxULP)
					}
				}
			}
			packed, packedSplit := route(ExpertRef{})
			tabled, tabledSplit := route(table)
			same("laid out, one launch against the two", packed, packedSplit)
			same("through the table, one launch against the two", tabled, tabledSplit)
			same("one launch, through the table against laid out", tabled, packed)
		})
	}
}

// TestMoERouteNotANumber: logits that are not numbers (a NaN row: a step
// run past a take's end on a poisoned input, or a model gone wrong) choose
// only experts in [0, E), under both policies and on every selection path
// (the warp lists of k ≤ kernel.RouteList, the arg-max rounds above it), so
// the expert kernels after the routing read in bounds and the NaN goes on
// to the draw, which reports it.
func TestMoERouteNotANumber(t *testing.T) { eachNumerics(t, testMoERouteNotANumber) }

func testMoERouteNotANumber(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct{ E, k int }{{256, 8}, {8, 4}, {512, 10}, {6, 3}} {
		for _, fill := range []string{"all", "half"} {
			t.Run(fmt.Sprintf("%dexperts_top%d_%s", c.E, c.k, fill), func(t *testing.T) {
				const n, pitch = 3, 16
				dense := make([]float32, n*c.E)
				for i := range dense {
					dense[i] = nan
					if fill == "half" && i%2 == 1 {
						dense[i] = float32(i % 7)
					}
				}
				ids, wts := poisoned(t, n*c.k), poisoned(t, n*c.k)
				xrep := poisoned(t, n*c.k*pitch)
				db, xb := upload(t, dense), upload(t, make([]float32, n*pitch))
				if err := dev.Run(func(q *Queue) error {
					return q.MoERoute(ids, wts, db, n, c.E, c.E, c.k, xrep, xb, pitch)
				}); err != nil {
					t.Fatal(err)
				}
				if err := dev.Sync(); err != nil {
					t.Fatal(err)
				}
				got := make([]int32, n*c.k)
				if err := Download(dev, got, ids, 0); err != nil {
					t.Fatal(err)
				}
				for i, e := range got {
					if e < 0 || int(e) >= c.E {
						t.Fatalf("choice %d of row %d: expert %d, outside [0, %d)", i%c.k, i/c.k, e, c.E)
					}
				}
			})
		}
	}
}

// combineNormRef is moe_combine_norm on the CPU for n rows: x plus the k
// routed rows of yr (row·k + j) weighted by wts and the shared row of ys
// gated by sigmoid(dense[row·stride + sgcol]), then the zero-centred RMSNorm
// by nw (eps 1e-6) into rows pitch apart. It returns the new x and the
// normed rows; x is left as it was.
func combineNormRef(x, yr, wts, ys, dense, nw []float32, n, H, k, stride, sgcol, pitch int) (refX, refN []float32) {
	refX = append([]float32(nil), x...)
	refN = make([]float32, n*pitch)
	for row := 0; row < n; row++ {
		o := make([]float32, H)
		for j := 0; j < k; j++ {
			cpu.AddScaled(o, yr[(row*k+j)*H:(row*k+j+1)*H], wts[row*k+j])
		}
		sh := append([]float32(nil), ys[row*H:(row+1)*H]...)
		g := cpu.Sigmoid(dense[row*stride+sgcol])
		for i := range sh {
			sh[i] *= g
		}
		cpu.Add(o, sh)
		xr := refX[row*H : (row+1)*H]
		cpu.Add(xr, o)
		cpu.RMSNormZeroCentred(refN[row*pitch:row*pitch+H], xr, nw, 1e-6)
	}
	return refX, refN
}

//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// TestMoEStepChainPDL runs a one-row step's feed-forward as the step
// enqueues it (the stacked dense projection, the routed gate·up in one
// launch, the down projections, the combine with the residual and the next
// norm) for several layers back to back in one captured graph, with
// programmatic dependent launch and without, and wants the same bits. Each
// layer routes differently from the one before (x moves on), and the
// gate·up reads 16 MB of experts, so a kernel that reads the routing
// before its PDL wait reads the previous layer's: the fault step27c found
// (the fast combine's weight load, moved above griddepcontrol.wait by
// ptxas). Drama 3's widths (hidden 2048, experts of 512), 64 experts.
func TestMoEStepChainPDL(t *testing.T) {
	if !dev.Info.PDL {
		t.Skip("no programmatic dependent launch on this device: nothing to compare")
	}
	eachNumerics(t, testMoEStepChainPDL)
}

func testMoEStepChainPDL(t *testing.T) {
	const H, E, k, P, I, Is, D, layers, replays = chainH, chainE, chainK, chainP, chainI, chainIs, chainD, 8, 3
	w := newMoEChainWeights(t, 1)
	gateUp, gateUpS, down, downS, denseW, sharedDown, nw := w.gateUp, w.gateUpS, w.down, w.downS, w.dense, w.sharedDown, w.norm
	r := newRand(t)
	x0, n0 := randNonZero(r, H), randNonZero(r, H)
	x, normed := alloc(t, H*4), alloc(t, H*4)
	dense, ids, wts := alloc(t, D*4), alloc(t, k*4), alloc(t, k*4)
	gu, yr := alloc(t, k*2*P*4), alloc(t, (k+1)*H*4)
	ys := &Block{Kind: DeviceMem, Ptr: yr.Ptr + uintptr(k*H*4), Bytes: H * 4}
	routed := false
	layer := func(q *Queue) error {
		g := q.backboneGemv(Gemv{Rows: D, Cols: H, N: 1, Mats: 1}, false, siteDense)
		if err := q.GemvBF16(g, dense, denseW, normed); err != nil {
			return err
		}
		gg := q.backboneGemv(Gemv{Rows: 2 * P, Cols: H, N: k, Ids: ids, Mats: E}, true, siteOther)
		ok, err := q.MoEGateUpRoute(gg, gu, ids, wts, dense, 1, D, E, k, gateUp, gateUpS, normed, H)
		if err != nil {
			return err
		}
		if routed = ok; !ok { // the instance has no routed twin: the two launches, as Backbone.routeGateUp runs them
			if err := q.MoERoute(ids, wts, dense, 1, D, E, k, nil, nil, H); err != nil {
				return err
			}
			if err := q.GemvFP8(gg, gu, gateUp, gateUpS, normed); err != nil {
				return err
			}
		}
		if err := q.MoEDown(yr, down, downS, 0, 0, true, E, ids, gu, P, I, I, k, sharedDown, dense, E, Is, H, ExpertRef{}); err != nil {
			return err
		}
		return q.MoECombineNorm(x, yr, wts, ys, dense, 1, D, E+2*Is, H, k, nil, normed, nw, H, 1e-6)
	}
	run := func(pdl bool) [][]float32 { return replayChain(t, pdl, layers, replays, layer, x, normed, x0, n0) }
	with, without := run(true), run(false)
	want := without[0]
	for i, w := range without[1:] {
		if differ, _ := ULPDiff(w, want); differ != 0 {
			t.Fatalf("without PDL, replay %d differs from replay 0 in %d values: the chain is not deterministic", i+1, differ)
		}
	}
	for i, got := range with {
		if differ, maxULP := ULPDiff(got, want); differ != 0 {
			worst := 0.0
			for j := range got {
				worst = max(worst, math.Abs(float64(got[j]-want[j])))
			}
			t.Errorf("replay %d with PDL: %d of %d values differ from the launches without (max %d ULP, %.3g)", i, differ, H, maxULP, worst)
		}
	}
	t.Logf("%d layers, routed gate·up in one launch: %v; %s", layers, routed, fmt.Sprintf("%d replays each way", replays))
}

// TestMoERowsChainPDL is TestMoEStepChainPDL for a B-row step's feed-forward
// as StepRows enqueues it at four rows under fast (the router and shared
// expert's projection read once for the rows, moe_route, the gate·up by
// ids, the down projections on the tensor cores, the combine with the
// next norm), layer after layer in one captured graph: with PDL it wants
// the bits of the launches without, and with the down projections'
// loads ahead of their wait (moe_down2_mma_ahead_fast, which reads
// moe_route's ids there) the bits of the kernel without them. Each layer
// routes the rows differently from the one before, so a down projection
// that read the ids before moe_route wrote them would sum the previous
// layer's experts.
func TestMoERowsChainPDL(t *testing.T) {
	if !dev.Info.PDL {
		t.Skip("no programmatic dependent launch on this device: nothing to compare")
	}
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast // the tensor-core down and its loads ahead are fast only
	defer func() { dev.Numerics = prev }()
	const H, E, k, P, I, Is, D, n, layers, replays = chainH, chainE, chainK, chainP, chainI, chainIs, chainD, 4, 8, 3
	w := newMoEChainWeights(t, 11)
	gateUp, gateUpS, down, downS, denseW, sharedDown, nw := w.gateUp, w.gateUpS, w.down, w.downS, w.dense, w.sharedDown, w.norm
	r := newRand(t)
	x0, n0 := randNonZero(r, n*H), randNonZero(r, n*H)
	x, normed := alloc(t, n*H*4), alloc(t, n*H*4)
	dense, ids, wts := alloc(t, n*D*4), alloc(t, n*k*4), alloc(t, n*k*4)
	gu, yr, ys := alloc(t, n*k*2*P*4), alloc(t, n*k*H*4), alloc(t, n*H*4)
	if !routeSplit(n) {
		t.Skip("$PROSCENIUM_GPU_SPLIT_ROUTE keeps the routing inside the gate·up: no down projection reads the ids ahead")
	}
	layer := func(q *Queue) error {
		if err := q.rowsProjection(Whole(dense), D, 0, Whole(denseW), Whole(normed), H, n, D, H, siteDense); err != nil {
			return err
		}
		gg := q.backboneGemv(Gemv{Rows: 2 * P, Cols: H, N: n * k, Ids: ids, Mats: E}, true, siteOther)
		ok, err := q.MoEGateUpRoute(gg, gu, ids, wts, dense, n, D, E, k, gateUp, gateUpS, normed, H)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("the gate·up instance %s has no twin by ids", gg.Variant.Name())
		}
		if err := q.moeDownRows(true, yr, ys, down, downS, 0, 0, true, E, ids, gu, P, I, I, k, sharedDown, dense, D, E, Is, H, n, ExpertRef{}); err != nil {
			return err
		}
		return q.MoECombineNorm(x, yr, wts, ys, dense, n, D, E+2*Is, H, k, nil, normed, nw, H, 1e-6)
	}
	run := func(pdl, ahead bool) [][]float32 {
		prevAhead := moeDownAhead
		moeDownAhead = ahead
		defer func() { moeDownAhead = prevAhead }()
		return replayChain(t, pdl, layers, replays, layer, x, normed, x0, n0)
	}
	want := run(false, false)[0]
	for _, c := range []struct {
		name       string
		pdl, ahead bool
	}{{"without PDL, loads ahead", false, true}, {"PDL", true, false}, {"PDL, loads ahead", true, true}} {
		for i, got := range run(c.pdl, c.ahead) {
			if differ, maxULP := ULPDiff(got, want); differ != 0 {
				t.Errorf("%s, replay %d: %d of %d values differ from the launches without PDL or loads ahead (max %d ULP)", c.name, i, differ, n*H, maxULP)
			}
		}
	}
	t.Logf("%d rows, %d layers, %d replays each way: the same bits", n, layers, replays)
}

// The chain tests' shapes: Drama 3's widths (hidden 2048, experts of 512, a
// shared expert of 256), 64 experts, top-8; D the stacked dense
// projection's rows (router logits, shared gate and up, one more).
const (
	chainH, chainE, chainK, chainP, chainI, chainIs = 2048, 64, 8, 512, 512, 256
	chainD                                          = chainE + 2*chainIs + 1
)

// moeChainWeights is a feed-forward layer's weights for the chain tests,
// synthetic (the device's generators from seed on).
type moeChainWeights struct {
	gateUp, gateUpS, down, downS, dense, sharedDown, norm *Block
}

func newMoEChainWeights(t *testing.T, seed uint64) moeChainWeights {
	t.Helper()
	const H, E, P, I, Is, D = chainH, chainE, chainP, chainI, chainIs, chainD
	gsc, dsc := FP8ScaleCount(2*P, H), FP8ScaleCount(H, I)
	w := moeChainWeights{gateUp: alloc(t, E*2*P*H), gateUpS: alloc(t, E*gsc*4), down: alloc(t, E*H*I), downS: alloc(t, E*dsc*4),
		dense: alloc(t, D*H*2), sharedDown: alloc(t, H*Is*2), norm: alloc(t, H*4)}
	if err := dev.Run(func(q *Queue) error {
		grid := [3]int{1024, 1, 1}
		return firstErr(
			kernel.SynthFP8(q, grid, 256, devPtr(w.gateUp), int64(E*2*P*H), seed),
			kernel.SynthFP8(q, grid, 256, devPtr(w.down), int64(E*H*I), seed+1),
			kernel.SynthF32(q, grid, 256, devPtr(w.gateUpS), int64(E*gsc), seed+2, 2e-3),
			kernel.SynthF32(q, grid, 256, devPtr(w.downS), int64(E*dsc), seed+3, 2e-3),
			kernel.SynthBF16(q, grid, 256, devPtr(w.dense), int64(D*H), seed+4, 0.05),
			kernel.SynthBF16(q, grid, 256, devPtr(w.sharedDown), int64(H*Is), seed+5, 0.05),
			kernel.SynthF32(q, grid, 256, devPtr(w.norm), int64(H), seed+6, 0.1))
	}); err != nil {
		t.Fatal(err)
	}
	return w
}

// replayChain captures layers calls of layer as one graph under PDL on or
// off and replays it replays times from the same x and normed rows (x0,
// n0), returning each replay's x.
func replayChain(t *testing.T, pdl bool, layers, replays int, layer func(*Queue) error, x, normed *Block, x0, n0 []float32) [][]float32 {
	t.Helper()
	dev.SetPDL(pdl)
	defer dev.SetPDL(true)
	var g *Graph
	if err := dev.Run(func(q *Queue) error {
		var err error
		g, err = q.Capture(func(q *Queue) error {
			for range layers {
				if err := layer(q); err != nil {
					return err
				}
			}
			return nil
		})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer dev.Do(func() error { g.Destroy(); return nil })
	var outs [][]float32
	for range replays {
		if err := firstErr(Upload(dev, x, 0, x0), Upload(dev, normed, 0, n0)); err != nil {
			t.Fatal(err)
		}
		if err := dev.Run(func(q *Queue) error { return q.LaunchGraph(g) }); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, download(t, x, len(x0)))
	}
	return outs
}

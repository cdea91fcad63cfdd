//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"proscenium/engine/drama3"
)

// Device tests of the fused step's kernels (fused.go, kernels/fused.cuh):
// each against the unfused launches it replaces under fast numerics (the
// same GEMV instance, then the tail's kernel), outputs NaN-poisoned, run
// twice so the second launch finds the counter the first one left (zero).

// underFast switches the test device to fast numerics for the test.
func underFast(t *testing.T) {
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast
	t.Cleanup(func() { dev.Numerics = prev })
}

// fusedTol is the fused kernels' bound against the unfused sequence
// (‖fused − unfused‖/‖unfused‖): the tails sum the norm's squares over 256
// threads where the unfused kernels use 1024.
const fusedTol = 1e-5

// zeroCounter is a device uint32 holding 0.
func zeroCounter(t *testing.T) *Block { return upload(t, []uint32{0}) }

// checkCounterZero fails unless the tail left its counter at zero.
func checkCounterZero(t *testing.T, c *Block) {
	t.Helper()
	got := make([]uint32, 1)
	if err := firstErr(dev.Sync(), Download(dev, got, c, 0)); err != nil {
		t.Fatal(err)
	}
	if got[0] != 0 {
		t.Fatalf("tail counter left at %d, want 0", got[0])
	}
}

func fusedGemvRef(q *Queue, y, W, x *Block, rows, cols int) error {
	return q.GemvBF16(Gemv{Rows: rows, Cols: cols, N: 1, Mats: 1, Variant: fusedGemv}, y, W, x)
}

func TestFusedOutAddNorm(t *testing.T) {
	underFast(t)
	r := newRand(t)
	for _, c := range []struct{ rows, cols, pitch int }{{2048, 4096, 2048}, {2048, 8192, 2048}, {136, 320, 144}, {6, 8, 16}} {
		t.Run(fmt.Sprintf("%dx%d", c.rows, c.cols), func(t *testing.T) {
			W := upload(t, bf16s(randNonZero(r, c.rows*c.cols)))
			nw := upload(t, randNonZero(r, c.rows))
			counter := zeroCounter(t)
			for run := 0; run < 2; run++ {
				in := upload(t, randNonZero(r, c.cols))
				x0 := randNonZero(r, c.rows)
				xRef, xGot := upload(t, x0), upload(t, x0)
				yRef, nRef := poisoned(t, c.rows), poisoned(t, c.pitch)
				yGot, nGot := poisoned(t, c.rows), poisoned(t, c.pitch)
				if err := dev.Run(func(q *Queue) error {
					return firstErr(fusedGemvRef(q, yRef, W, in, c.rows, c.cols),
						q.AddRMSNormZC(xRef, yRef, nRef, nw, 1, c.rows, c.pitch, 1e-6),
						q.OutAddNorm(yGot, W, in, xGot, nGot, nw, counter, c.rows, c.cols, c.pitch, 1e-6))
				}); err != nil {
					t.Fatal(err)
				}
				checkClose(t, "projection", download(t, yGot, c.rows), download(t, yRef, c.rows), fusedTol)
				checkClose(t, "residual", download(t, xGot, c.rows), download(t, xRef, c.rows), fusedTol)
				checkClose(t, "post norm", download(t, nGot, c.pitch), download(t, nRef, c.pitch), fusedTol)
				checkCounterZero(t, counter)
			}
		})
	}
	t.Run("exact refused", func(t *testing.T) {
		dev.Numerics = drama3.NumericsExact
		defer func() { dev.Numerics = drama3.NumericsFast }()
		b := poisoned(t, 64)
		err := dev.Run(func(q *Queue) error { return q.OutAddNorm(b, b, b, b, b, b, b, 8, 8, 8, 1e-6) })
		if err == nil {
			t.Fatal("OutAddNorm ran under exact numerics")
		}
	})
}

func TestFusedDenseRoute(t *testing.T) {
	underFast(t)
	r := newRand(t)
	for _, c := range []struct{ rows, cols, E, k int }{{1281, 2048, 256, 8}, {119, 136, 6, 3}, {600, 64, 512, 10}} {
		t.Run(fmt.Sprintf("%dx%d_%dexperts_top%d", c.rows, c.cols, c.E, c.k), func(t *testing.T) {
			W := upload(t, bf16s(randNonZero(r, c.rows*c.cols)))
			counter := zeroCounter(t)
			for run := 0; run < 2; run++ {
				x := upload(t, randNonZero(r, c.cols))
				dRef, iRef, wRef := poisoned(t, c.rows), poisoned(t, c.k), poisoned(t, c.k)
				dGot, iGot, wGot := poisoned(t, c.rows), poisoned(t, c.k), poisoned(t, c.k)
				if err := dev.Run(func(q *Queue) error {
					return firstErr(fusedGemvRef(q, dRef, W, x, c.rows, c.cols),
						q.MoERoute(iRef, wRef, dRef, 1, c.rows, c.E, c.k, nil, nil, 0),
						q.DenseRoute(dGot, W, x, iGot, wGot, counter, c.rows, c.cols, c.E, c.k))
				}); err != nil {
					t.Fatal(err)
				}
				checkClose(t, "dense", download(t, dGot, c.rows), download(t, dRef, c.rows), fusedTol)
				gotIDs, refIDs := make([]int32, c.k), make([]int32, c.k)
				if err := firstErr(Download(dev, gotIDs, iGot, 0), Download(dev, refIDs, iRef, 0)); err != nil {
					t.Fatal(err)
				}
				for j := range refIDs {
					if gotIDs[j] != refIDs[j] {
						t.Fatalf("choice %d: expert %d, unfused %d (fused %v, unfused %v)", j, gotIDs[j], refIDs[j], gotIDs, refIDs)
					}
				}
				checkClose(t, "route weights", download(t, wGot, c.k), download(t, wRef, c.k), fusedTol)
				checkCounterZero(t, counter)
			}
		})
	}
}

func TestFusedDownCombine(t *testing.T) {
	underFast(t)
	r := newRand(t)
	for _, c := range []struct {
		fp8                   bool
		h, i, ip, p, e, k, is int
		E                     int // routed logits before the shared gate and up in dense
	}{
		{true, 2048, 512, 512, 512, 20, 8, 512, 256},
		{true, 136, 40, 48, 128, 6, 3, 56, 6},
		{false, 136, 40, 40, 40, 6, 3, 56, 6},
	} {
		t.Run(fmt.Sprintf("fp8_%v_%dx%d", c.fp8, c.h, c.i), func(t *testing.T) {
			W, S, _ := expertWeights(t, r, c.fp8, c.e, c.h, c.ip)
			Ws := upload(t, bf16s(randNonZero(r, c.h*c.is)))
			nw := upload(t, randNonZero(r, c.h))
			counter := zeroCounter(t)
			sgcol := c.E + 2*c.is
			for run := 0; run < 2; run++ {
				ids := upload(t, distinctIDs(r, c.k, c.e))
				gu := upload(t, randNonZero(r, c.k*2*c.p))
				dense := upload(t, randNonZero(r, sgcol+1))
				wts := upload(t, randNonZero(r, c.k))
				x0 := randNonZero(r, c.h)
				xRef, xGot := upload(t, x0), upload(t, x0)
				yRef, nRef := poisoned(t, (c.k+1)*c.h), poisoned(t, c.h)
				yGot, nGot := poisoned(t, (c.k+1)*c.h), poisoned(t, c.h)
				ys := &Block{Kind: DeviceMem, Ptr: yRef.Ptr + uintptr(c.k*c.h*4), Bytes: int64(c.h * 4)}
				if err := dev.Run(func(q *Queue) error {
					return firstErr(q.MoEDown(yRef, W, S, 0, 0, c.fp8, c.e, ids, gu, c.p, c.i, c.ip, c.k, Ws, dense, c.E, c.is, c.h, ExpertRef{}),
						q.MoECombineNorm(xRef, yRef, wts, ys, dense, 1, sgcol+1, sgcol, c.h, c.k, nil, nRef, nw, c.h, 1e-6),
						q.MoEDownCombine(DownCombine{Yr: yGot, W: W, S: S, FP8: c.fp8, Experts: c.e, Ids: ids, GU: gu, P: c.p, I: c.i,
							Ip: c.ip, K: c.k, Ws: Ws, Dense: dense, SharedCol: c.E, Is: c.is, H: c.h, X: xGot, Wts: wts, SGCol: sgcol,
							Normed: nGot, NW: nw, NPitch: c.h, Eps: 1e-6, Counter: counter}))
				}); err != nil {
					t.Fatal(err)
				}
				checkClose(t, "down projections", download(t, yGot, (c.k+1)*c.h), download(t, yRef, (c.k+1)*c.h), fusedTol)
				checkClose(t, "residual", download(t, xGot, c.h), download(t, xRef, c.h), fusedTol)
				checkClose(t, "next norm", download(t, nGot, c.h), download(t, nRef, c.h), fusedTol)
				checkCounterZero(t, counter)
			}
		})
	}
}

// TestFusedStep runs the same steps with and without the fused kernels
// under fast numerics: every row within 1e-4 of the unfused step's (the
// bound fast holds against the CPU), and the captured fused step has four
// launches a layer fewer (three a DeltaNet layer whose step is not split;
// counted in the graphs).
func TestFusedStep(t *testing.T) {
	underFast(t)
	for _, dir := range backboneCheckpoints(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := newRand(t)
			ck := loadCheckpoint(t, dir)
			gb, err := LoadBackbone(dev, ck, 64, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer gb.Close()
			prompt, _ := testRows(r, 12, ck.Config.Text.VocabSize, gb.Hidden())
			steps, _ := testRows(r, 8, ck.Config.Text.VocabSize, gb.Hidden())
			run := func(fused bool) ([]float32, int) {
				gb.SetFused(fused)
				if err := gb.Reset(); err != nil {
					t.Fatal(err)
				}
				if _, err := gb.Prefill(prompt); err != nil {
					t.Fatal(err)
				}
				var out []float32
				for _, row := range steps {
					h, err := gb.Step(row)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, h...)
				}
				return out, gb.StepLaunches()
			}
			ref, plain := run(false)
			got, fused := run(true)
			// Four launches a layer fewer, one less where the DeltaNet step
			// is not split in two launches (the row kernel, or the cluster
			// step: one launch each), one less where the attention is one
			// launch already (attn_decode_fast: nothing for the fused step's
			// attn_partial_combine to join) and one less where the unfused
			// step routes in its gate·up launch (the fused step's DenseRoute
			// then saves none).
			fewer := 0
			for i := range gb.layers {
				fewer += 4
				if err := dev.Run(func(q *Queue) error {
					if dn := gb.layers[i].dn; dn != nil && (!dn.splitStep() || dn.clusterStep(q, 1)) {
						fewer--
					}
					if at := gb.layers[i].at; at != nil && q.decodeApplies(at, 1, gb.scratch(gb.Plan.Counters+4*counterHeads, 4*gb.Plan.headCounters())) {
						fewer--
					}
					if gb.routesInGateUp(q, &gb.layers[i], 1) {
						fewer--
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("launches per step: %d unfused, %d fused (%d layers)", plain, fused, len(gb.layers))
			if fused != plain-fewer {
				t.Errorf("fused step: %d launches, want %d − %d = %d", fused, plain, fewer, plain-fewer)
			}
			e := maxRowRelErr(t, "fused step", got, ref, gb.Hidden())
			t.Logf("worst step row against the unfused step: %.3g", e)
			if !(e <= 1e-4) {
				t.Errorf("fused step rows: worst relative error %.3g > 1e-4", e)
			}
		})
	}
}

// TestFusedDeltaNetStep runs one split DeltaNet step both ways from the same
// random state and projected row: deltanet_step_cols + deltanet_step_norm,
// and deltanet_step_fused_fast (a tail per value head).
func TestFusedDeltaNetStep(t *testing.T) {
	underFast(t)
	r := newRand(t)
	for _, tc := range mixerShapes {
		t.Run(tc.name, func(t *testing.T) {
			c := newDeltaNetCase(t, r, tc.g, 1, true)
			c.layer.Step = DeltaNetSplitStep
			if !c.layer.splitStep() {
				t.Fatalf("geometry %s does not run the split step", tc.name)
			}
			dg := c.layer.G
			vd := dg.ValueHeads * dg.ValueDim
			convFloats, sFloats := dg.convStateFloats(), dg.ValueHeads*dg.KeyDim*dg.ValueDim
			coreOff := c.layer.Scratch.Off + dg.scratchLayout(1)
			st := c.layer.State
			counters := upload(t, make([]uint32, dg.ValueHeads))
			nans := make([]float32, vd)
			for i := range nans {
				nans[i] = float32(math.NaN())
			}
			// run sets the state and the projected row, runs one step and
			// returns the outputs and both states.
			run := func(conv, s, rows []float32, step func(q *Queue) error) (out, gotConv, gotS []float32) {
				if err := firstErr(Upload(dev, st.Block, st.Off, conv), Upload(dev, st.Block, st.Off+4*int64(convFloats), s),
					Upload(dev, c.layer.Scratch.Block, c.layer.Scratch.Off, rows), Upload(dev, c.layer.Scratch.Block, coreOff, nans)); err != nil {
					t.Fatal(err)
				}
				if err := dev.Run(step); err != nil {
					t.Fatal(err)
				}
				out, gotConv, gotS = make([]float32, vd), make([]float32, convFloats), make([]float32, sFloats)
				if err := firstErr(dev.Sync(), Download(dev, out, c.layer.Scratch.Block, coreOff),
					Download(dev, gotConv, st.Block, st.Off), Download(dev, gotS, st.Block, st.Off+4*int64(convFloats))); err != nil {
					t.Fatal(err)
				}
				return out, gotConv, gotS
			}
			for i := 0; i < 2; i++ {
				conv, s := randNonZero(r, convFloats), scaled(r, sFloats, 0.2)
				rows := newProjectedRows(r, dg, 1).rows
				refOut, refConv, refS := run(conv, s, rows, func(q *Queue) error { return q.deltaNetMix(&c.layer, 1, false) })
				out, gotConv, gotS := run(conv, s, rows, func(q *Queue) error { return q.deltaNetStepFused(&c.layer, counters) })
				what := fmt.Sprintf("step %d", i)
				checkClose(t, what+" outputs", out, refOut, fusedTol)
				checkClose(t, what+" recurrent state", gotS, refS, fusedTol)
				checkClose(t, what+" conv state", gotConv, refConv, fusedTol)
				differ, maxULP := ULPDiff(out, refOut)
				t.Logf("%s outputs: %d/%d differ from the unfused kernels' bits, max %d ULP", what, differ, len(out), maxULP)
				got := make([]uint32, dg.ValueHeads)
				if err := Download(dev, got, counters, 0); err != nil {
					t.Fatal(err)
				}
				for h, v := range got {
					if v != 0 {
						t.Fatalf("%s: head %d's tail counter left at %d", what, h, v)
					}
				}
			}
		})
	}
}

// TestFusedAttention runs one-row attention cores both ways at the same
// position over the same cache: attn_partial + attn_combine, and
// attn_partial_combine_fast (a tail per head), at positions that leave some
// splits empty and that fill every split.
func TestFusedAttention(t *testing.T) {
	underFast(t)
	r := newRand(t)
	for _, tc := range mixerShapes {
		t.Run(tc.name, func(t *testing.T) {
			const capacity = 1100
			c := newAttentionCase(t, r, tc.g, 1, capacity, true)
			l := &c.layer
			pw, aw := l.G.ProjWidth(), tc.g.Heads*tc.g.HeadDim
			attnOff := l.G.scratchLayout(1, capacity).attn
			kvFloats := int(l.G.KVBytes(capacity) / 4)
			if err := Upload(dev, l.KV.Block, l.KV.Off, scaled(r, kvFloats, 1)); err != nil {
				t.Fatal(err)
			}
			counters := upload(t, make([]uint32, tc.g.Heads))
			nans := make([]float32, aw)
			for i := range nans {
				nans[i] = float32(math.NaN())
			}
			for _, pos := range []int32{0, 5, 37, 1000} {
				proj := randNonZero(r, pw)
				run := func(fused bool) []float32 {
					if err := firstErr(Upload(dev, c.pos, 0, []int32{pos}), Upload(dev, l.Scratch.Block, l.Scratch.Off, proj),
						Upload(dev, l.Scratch.Block, l.Scratch.Off+attnOff, nans)); err != nil {
						t.Fatal(err)
					}
					var cs *Block
					if fused {
						cs = counters
					}
					if err := dev.Run(func(q *Queue) error { return q.attentionCoreFused(l, 1, Whole(c.pos), 0, cs) }); err != nil {
						t.Fatal(err)
					}
					out := make([]float32, aw)
					if err := firstErr(dev.Sync(), Download(dev, out, l.Scratch.Block, l.Scratch.Off+attnOff)); err != nil {
						t.Fatal(err)
					}
					return out
				}
				ref, got := run(false), run(true)
				what := fmt.Sprintf("position %d", pos)
				checkClose(t, what, got, ref, fusedTol)
				differ, maxULP := ULPDiff(got, ref)
				t.Logf("%s: %d/%d differ from the unfused kernels' bits, max %d ULP", what, differ, len(ref), maxULP)
				cnt := make([]uint32, tc.g.Heads)
				if err := Download(dev, cnt, counters, 0); err != nil {
					t.Fatal(err)
				}
				for h, v := range cnt {
					if v != 0 {
						t.Fatalf("%s: head %d's tail counter left at %d", what, h, v)
					}
				}
			}
		})
	}
}

//go:build cuda

package cuda

import (
	"math"
	"testing"

	"proscenium/engine/drama3"
)

// TestRoutedStaging: under a host tier of three host layers (two of them not
// the home layer), prefill passes of 2 to 40 rows that stage only the
// experts their rows route to (routed staging, forced: the tiny checkpoints
// have too few host layers for it to pay) leave what the passes without it
// leave, bit for bit: every row's hidden state, and the steps after, which
// read the home layer from the stage where the pass must leave it whole.
// Where a pass's rows route to fewer experts than a layer has, it carries
// fewer bytes than whole copies would; the bytes it carries are what the
// routing says, counted from the routes the pass logged.
func TestRoutedStaging(t *testing.T) {
	eachTinyCheckpoint(t, func(t *testing.T, dir string) {
		ck, _ := engineWithPrompts(t, dir)
		opt := FramesOptions{Capacity: 600, PrefixCacheBytes: -1}
		f := loadUnder(t, ck, opt, hostLayersBudget(t, ck, opt, 3))
		defer f.Close()
		bb, w := f.bb, f.bb.W
		H, V := ck.Config.Text.HiddenSize, ck.Config.Text.VocabSize
		r := newRand(t)
		defer func(on, always bool) { StageRouted, routedStagingAlways = on, always }(StageRouted, routedStagingAlways)
		partial := false
		for _, n := range []int{2, 3, 7, 40} {
			rows, _ := testRows(r, n, V, H)
			steps, _ := testRows(r, 2, V, H)
			run := func(routed bool) ([]float32, int64) {
				t.Helper()
				StageRouted, routedStagingAlways = routed, routed
				if err := bb.Reset(); err != nil {
					t.Fatal(err)
				}
				before := w.StagedBytes
				out, err := bb.Prefill(rows)
				if err != nil {
					t.Fatal(err)
				}
				staged := w.StagedBytes - before
				if !w.stageHoldsAll(w.home) {
					t.Fatalf("%d rows (routed staging %v): the pass left the home layer %d partly off the stage", n, routed, w.home)
				}
				for _, s := range steps {
					h, err := bb.Step(s)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, h...)
				}
				return out, staged
			}
			want, whole := run(false)
			got, routed := run(true)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%d rows: row %d value %d: routed staging %g, without %g", n, i/H, i%H, got[i], want[i])
				}
			}
			// What routed staging carries by the routing: each non-home host
			// layer's scales and routed experts, the home layer whole.
			wantBytes := routedBytes(t, bb, rows)
			if routed != wantBytes {
				t.Fatalf("%d rows: routed staging carried %d bytes, the routing says %d", n, routed, wantBytes)
			}
			var spans int64
			for i, x := range w.Layout.Experts {
				if w.Host[i] != nil {
					spans += x.SpanBytes()
				}
			}
			partial = partial || routed < spans
			t.Logf("%d rows: routed staging carried %d bytes, without it %d (whole copies of the host layers: %d)", n, routed, whole, spans)
		}
		if !partial {
			t.Fatal("no pass routed to fewer experts than a layer has: nothing staged by runs")
		}
	})
}

// routedBytes is what routed staging of rows carries over the bus by their
// routing (a pass of them again, its routes logged): for each host layer
// but the home one, every expert's scales and the matrices of the experts
// the rows route to (the span in one copy where they route to every one);
// for the home layer, its whole span (the stage held it before the pass,
// and the other layers' staging overwrote it).
func routedBytes(t *testing.T, bb *Backbone, rows []BackboneRow) int64 {
	t.Helper()
	bb.unlogged = false // (the steps before were graphs that did not log; a pass is not captured, so it logs)
	if err := bb.KeepRoutes(); err != nil {
		t.Fatal(err)
	}
	defer bb.closeRoutes()
	if err := bb.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := bb.Prefill(rows); err != nil {
		t.Fatal(err)
	}
	routes, err := bb.PassRoutes()
	if err != nil {
		t.Fatal(err)
	}
	w := bb.W
	var bytes int64
	for i, x := range w.Layout.Experts {
		if w.Host[i] == nil {
			continue
		}
		if i == w.home {
			bytes += x.SpanBytes()
			continue
		}
		used := map[int32]bool{}
		for _, row := range routes {
			for _, e := range row[i].Experts {
				used[e] = true
			}
		}
		if len(used) == x.Experts { // every expert: one copy of the span
			bytes += x.SpanBytes()
			continue
		}
		if x.FP8 {
			bytes += int64(x.Experts*(x.GateUpScaleCount+x.DownScaleCount)) * 4
		}
		bytes += int64(len(used)) * (x.GateUpMatBytes + x.DownMatBytes)
	}
	return bytes
}

// hostLayersBudget is device bytes under which the checkpoint's frames load
// with the experts of at least hostLayers layers in host memory: from
// hostTierBudget, each load under what the one before admitted less a
// layer's experts. (The host tier's own budget has room to spare: its dense
// part is smaller, the embedding and LM head in host memory too.)
func hostLayersBudget(t *testing.T, ck *drama3.Checkpoint, opt FramesOptions, hostLayers int) int64 {
	t.Helper()
	budget := hostTierBudget(t, ck, opt)
	for range 16 {
		f := loadUnder(t, ck, opt, budget)
		tier, admitted := f.Tier(), f.Admitted()
		var span int64
		for _, x := range f.bb.W.Layout.Experts {
			span = max(span, x.SpanBytes())
		}
		f.Close()
		if host := tier.Layers - tier.DeviceLayers; host >= hostLayers {
			t.Logf("%d host layers under %d bytes: %s", host, budget, tier)
			return budget
		}
		budget = admitted - span
	}
	t.Fatalf("no load with %d host layers", hostLayers)
	return 0
}

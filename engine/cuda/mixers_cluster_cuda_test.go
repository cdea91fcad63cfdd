//go:build cuda

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"proscenium/engine/drama3"
)

// The cluster step (deltanet_step_cluster_fast and its B-row instance,
// DeltaNetClusterStep) against the split kernels it stands in for, under
// fast numerics: from the same random state and inputs, every step's layer
// output and, after the steps, the whole conv and recurrent state within
// 1e-5 relative of the split step's (both are fast: float32 sums in other
// orders). Several steps in a row, so that each step reads the conv window
// the previous one moved (every block of a head moves a share of it). Its
// agreement with the CPU: TestDeltaNetLayer/*/cluster and
// TestMixerStepGraph/*/cluster (a captured step, under PDL).

// clusterTol is the cluster step's bound against the split step's.
const clusterTol = 1e-5

func TestDeltaNetClusterStep(t *testing.T) {
	if dev.Info.Major < 9 {
		t.Skip("thread block clusters need sm_90")
	}
	prevN, prevD := dev.Numerics, deltaNetClusterDefault
	dev.Numerics, deltaNetClusterDefault = drama3.NumericsFast, false // the split layer must run the split kernels
	defer func() { dev.Numerics, deltaNetClusterDefault = prevN, prevD }()
	r := newRand(t)
	for _, g := range mixerShapes {
		t.Run(g.name+"/one", func(t *testing.T) { testClusterOne(t, r, g.g) })
		t.Run(g.name+"/rows", func(t *testing.T) { testClusterRows(t, r, g.g) })
	}
}

// clusterPair is one layer's weights twice over: the split step's layer and
// the cluster step's, each with its own state (the same values) and its own
// scratch (NaN: an output the cluster step leaves unwritten shows).
func clusterPair(t *testing.T, r *rand.Rand, g mixerShape, maxRows int, state []float32) (split, cl DeltaNetLayer) {
	c := newDeltaNetCase(t, r, g, maxRows, true)
	split, cl = c.layer, c.layer
	split.Step, cl.Step = DeltaNetSplitStep, DeltaNetClusterStep
	for _, l := range []*DeltaNetLayer{&split, &cl} {
		l.State = Whole(upload(t, state))
		l.Scratch = Whole(poisoned(t, int(l.G.ScratchBytes(maxRows)/4)))
	}
	if err := dev.Run(func(q *Queue) error {
		if !cl.clusterStep(q, 1) {
			return fmt.Errorf("geometry %+v: the cluster step would not run", cl.G)
		}
		if split.clusterStep(q, 1) {
			return fmt.Errorf("the split layer would run the cluster step")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return split, cl
}

// checkClusterState compares the two layers' conv and recurrent states.
func checkClusterState(t *testing.T, what string, split, cl []float32, g DeltaNetGeometry) {
	t.Helper()
	cs := g.convStateFloats()
	checkClose(t, what+" conv window", cl[:cs], split[:cs], clusterTol)
	checkClose(t, what+" recurrent state", cl[cs:], split[cs:], clusterTol)
}

func testClusterOne(t *testing.T, r *rand.Rand, g mixerShape) {
	dg := deviceDeltaNetGeometry(&g)
	split, cl := clusterPair(t, r, g, 8, randomState(t, r, int(dg.StateBytes()/4)))
	hid := g.Hidden
	x := alloc(t, hid*4)
	for s := 0; s < 4; s++ {
		xs := randNonZero(r, hid)
		if err := Upload(dev, x, 0, xs); err != nil {
			t.Fatal(err)
		}
		outS, outC := poisoned(t, hid), poisoned(t, hid)
		if err := dev.Run(func(q *Queue) error {
			if err := q.DeltaNetForward(&split, Whole(outS), Whole(x), 1); err != nil {
				return err
			}
			return q.DeltaNetForward(&cl, Whole(outC), Whole(x), 1)
		}); err != nil {
			t.Fatal(err)
		}
		checkClose(t, fmt.Sprintf("step %d output", s), download(t, outC, hid), download(t, outS, hid), clusterTol)
	}
	n := int(dg.StateBytes() / 4)
	checkClusterState(t, "after 4 steps:", download(t, split.State.Block, n), download(t, cl.State.Block, n), dg)
}

func testClusterRows(t *testing.T, r *rand.Rand, g mixerShape) {
	dg := deviceDeltaNetGeometry(&g)
	sb := int(dg.StateBytes())
	nr := len(mixerSlots)
	split, cl := clusterPair(t, r, g, 8, randomState(t, r, nr*sb/4))
	hid := g.Hidden
	slots := stepSlots{slots: Whole(upload(t, mixerSlots)), stride: int64(sb / 4)}
	x := alloc(t, nr*hid*4)
	for s := 0; s < 3; s++ {
		xs := randNonZero(r, nr*hid)
		if err := Upload(dev, x, 0, xs); err != nil {
			t.Fatal(err)
		}
		outS, outC := poisoned(t, nr*hid), poisoned(t, nr*hid)
		for _, run := range []struct {
			l   *DeltaNetLayer
			out *Block
		}{{&split, outS}, {&cl, outC}} {
			if err := dev.Run(func(q *Queue) error {
				o, err := q.deltaNetStepRows(run.l, Whole(run.out), Whole(x), nr, slots)
				if err != nil {
					return err
				}
				return o.projectRows(q, Whole(run.out), nr)
			}); err != nil {
				t.Fatal(err)
			}
		}
		got, want := download(t, outC, nr*hid), download(t, outS, nr*hid)
		for row, sl := range mixerSlots {
			checkClose(t, fmt.Sprintf("step %d row %d (slot %d) output", s, row, sl), got[row*hid:(row+1)*hid],
				want[row*hid:(row+1)*hid], clusterTol)
		}
	}
	gotS, wantS := download(t, cl.State.Block, nr*sb/4), download(t, split.State.Block, nr*sb/4)
	for sl := 0; sl < nr; sl++ {
		checkClusterState(t, fmt.Sprintf("slot %d after 3 steps:", sl), wantS[sl*sb/4:(sl+1)*sb/4], gotS[sl*sb/4:(sl+1)*sb/4], dg)
	}
}

// TestDeltaNetClusterTiming prints the device time a layer of the step's
// DeltaNet mixer takes (the kernels between the projections and out_proj:
// the split pair or the cluster step) at Drama 3's geometry, for B = 1 (the
// one-row kernels) and B = 1, 2, 4, 8 (the B-row kernels), under fast
// numerics: a graph of 30 launches, as the step's 30 layers, each on its
// own state (B takes' slots), replayed after a warm-up; the mean per layer.
// Nothing is asserted about the figures (docs/PERF.md "dn32").
func TestDeltaNetClusterTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	if dev.Info.Major < 9 {
		t.Skip("thread block clusters need sm_90")
	}
	prevN, prevD := dev.Numerics, deltaNetClusterDefault
	dev.Numerics, deltaNetClusterDefault = drama3.NumericsFast, false
	defer func() { dev.Numerics, deltaNetClusterDefault = prevN, prevD }()
	r := newRand(t)
	const layers, reps = 30, 20
	g := fullGeometry
	c := newDeltaNetCase(t, r, g, 8, true)
	dg := c.layer.G
	sb := dg.StateBytes()
	hid := g.Hidden
	x := Whole(upload(t, randNonZero(r, 8*hid)))
	out := Whole(alloc(t, 8*hid*4))
	slotIDs := []int32{3, 0, 6, 1, 7, 2, 5, 4}
	slots := stepSlots{slots: Whole(upload(t, slotIDs)), stride: sb / 4}
	states := make([]Tensor, layers)
	vals := randomState(t, r, 8*int(sb/4)) // the same values in each layer's own memory
	for i := range states {
		states[i] = Whole(upload(t, vals))
	}
	for _, b := range []int{0, 1, 2, 4, 8} { // 0: the one-row kernels
		rows := max(b, 1)
		// The projected rows the mixers read, made once.
		if err := dev.Run(func(q *Queue) error {
			l := c.layer
			l.State = states[0] // B slots
			_, err := q.deltaNetStepRows(&l, out, x, rows, slots)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		var us [2]float64
		for k, step := range []DeltaNetStep{DeltaNetSplitStep, DeltaNetClusterStep} {
			l := c.layer
			l.Step = step
			mix := func(q *Queue) error {
				for i := 0; i < layers; i++ {
					l.State = states[i]
					var err error
					if b == 0 {
						err = q.deltaNetMix(&l, 1, false)
					} else {
						err = q.deltaNetRowsMix(&l, rows, slots)
					}
					if err != nil {
						return err
					}
				}
				return nil
			}
			var graph *Graph
			if err := dev.Run(func(q *Queue) (err error) { graph, err = q.Capture(mix); return }); err != nil {
				t.Fatal(err)
			}
			if err := dev.Run(func(q *Queue) error { return q.LaunchGraph(graph) }); err != nil { // warm-up
				t.Fatal(err)
			}
			ms, err := dev.Time(func(q *Queue) error {
				for i := 0; i < reps; i++ {
					if err := q.LaunchGraph(graph); err != nil {
						return err
					}
				}
				return nil
			})
			dev.Run(func(q *Queue) error { graph.Destroy(); return nil })
			if err != nil {
				t.Fatal(err)
			}
			us[k] = 1000 * ms / reps / layers
		}
		what := fmt.Sprintf("B = %d (B-row kernels)", b)
		if b == 0 {
			what = "B = 1 (one-row kernels)"
		}
		fmt.Printf("dn32 timing %-24s split %6.2f µs  cluster %6.2f µs a layer  (×%.2f)\n", what, us[0], us[1], us[0]/us[1])
	}
}

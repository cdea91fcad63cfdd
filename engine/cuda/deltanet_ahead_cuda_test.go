//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"proscenium/engine/drama3"
)

// TestDeltaNetStepAhead: the step's DeltaNet update with its state (and, in
// the cluster step, its conv window and weights) read before the PDL wait
// behind a waited input projection (deltaNetAhead: the cluster step of one
// row and of two, the split step's columns of four; docs/PERF.md "ahead25")
// gives the bits of the update that reads them after it. Several steps of
// one layer (input projection, update, output projection) in one captured
// graph under PDL, each step's update reading the state the one before
// wrote two launches earlier: an update that read it before its writer
// finished would differ. Drama 3's geometry and the odd one, under fast.
func TestDeltaNetStepAhead(t *testing.T) {
	if dev.Info.Major < 9 || !dev.Info.PDL {
		t.Skip("thread block clusters and PDL need sm_90")
	}
	prevN, prevA := dev.Numerics, deltaNetAhead
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics, deltaNetAhead = prevN, prevA }()
	r := newRand(t)
	const steps = 4
	for _, tc := range mixerShapes {
		for _, n := range []int{0, 2, 4} { // 0: the one-take step
			t.Run(fmt.Sprintf("%s/rows_%d", tc.name, n), func(t *testing.T) {
				g := tc.g
				dg := deviceDeltaNetGeometry(&g)
				sb := int(dg.StateBytes())
				rows := max(n, 1)
				c := newDeltaNetCase(t, r, g, 8, true)
				state0 := randomState(t, r, rows*sb/4)
				xs := make([][]float32, steps)
				for s := range xs {
					xs[s] = randNonZero(r, rows*g.Hidden)
				}
				x := alloc(t, steps*rows*g.Hidden*4)
				for s := range xs {
					if err := Upload(dev, x, int64(s*rows*g.Hidden*4), xs[s]); err != nil {
						t.Fatal(err)
					}
				}
				slotIDs := []int32{1, 0, 3, 2}[:rows]
				slots := stepSlots{slots: Whole(upload(t, slotIDs)), stride: int64(sb / 4)}
				run := func(ahead bool) (outs, state []float32) {
					deltaNetAhead = ahead
					if err := dev.Run(func(q *Queue) error {
						if q.deltaNetInWaited(rows) != ahead {
							return fmt.Errorf("deltaNetInWaited(%d) = %v with the reads ahead %v: the test would not compare them", rows, !ahead, ahead)
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					l := c.layer
					l.State = Whole(upload(t, state0))
					out := poisoned(t, steps*rows*g.Hidden)
					runCaptured(t, func(q *Queue) error {
						for s := 0; s < steps; s++ {
							xi, oi := Whole(x).At(int64(s*rows*g.Hidden*4)), Whole(out).At(int64(s*rows*g.Hidden*4))
							if n == 0 {
								if err := q.DeltaNetForward(&l, oi, xi, 1); err != nil {
									return err
								}
								continue
							}
							o, err := q.deltaNetStepRows(&l, oi, xi, rows, slots)
							if err != nil {
								return err
							}
							if err := o.projectRows(q, oi, rows); err != nil {
								return err
							}
						}
						return nil
					})
					return download(t, out, steps*rows*g.Hidden), download(t, l.State.Block, rows*sb/4)
				}
				wantO, wantS := run(false)
				gotO, gotS := run(true)
				if d, ulp := ULPDiff(gotO, wantO); d != 0 {
					t.Errorf("outputs of %d steps: %d of %d values differ with the loads ahead (up to %d ULP)", steps, d, len(wantO), ulp)
				}
				if d, ulp := ULPDiff(gotS, wantS); d != 0 {
					t.Errorf("states after %d steps: %d of %d values differ with the loads ahead (up to %d ULP)", steps, d, len(wantS), ulp)
				}
			})
		}
	}
}

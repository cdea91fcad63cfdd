//go:build cuda

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The B-row step's mixers (the *_slots kernels with the several-row
// projections) against their one-row references: each row on its slot must
// give the output, state and cache the one-row layer gives that slot's take
// alone (the one-row kernels are held to engine/cpu by TestDeltaNetLayer and
// TestAttentionLayer). Exact: the same bits; fast: within 1e-5 relative
// (the projections' instance may differ from the one-row choice).

// mixerSlots is three takes' slots, stepped in another order than their
// slot numbers.
var mixerSlots = []int32{2, 0, 1}

// checkMixerRows holds a slot path's values to the one-row path's.
func checkMixerRows(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if dev.Numerics.Exact() {
		if d, ulp := ULPDiff(got, want); d != 0 {
			t.Fatalf("%s: %d of %d values differ from the one-row path's (up to %d ULP)", what, d, len(want), ulp)
		}
		return
	}
	checkClose(t, what, got, want, 1e-5)
}

// randomState is n random small values (a take's state mid-way).
func randomState(t *testing.T, r *rand.Rand, n int) []float32 { return scaled(r, n, 0.2) }

func TestDeltaNetStepRows(t *testing.T) { eachNumerics(t, testDeltaNetStepRows) }

func testDeltaNetStepRows(t *testing.T) {
	r := newRand(t)
	for _, g := range mixerShapes {
		t.Run(g.name, func(t *testing.T) {
			n := len(mixerSlots)
			c := newDeltaNetCase(t, r, g.g, 8, true)
			c.layer.Step = DeltaNetSplitStep
			dg, hid := c.layer.G, g.g.Hidden
			sb := int(dg.StateBytes())
			states := randomState(t, r, n*sb/4)
			all := upload(t, states)
			xs := randNonZero(r, n*hid)
			x, out := upload(t, xs), poisoned(t, n*hid)
			l := c.layer
			l.State = Whole(all)
			sl := stepSlots{slots: Whole(upload(t, mixerSlots)), stride: int64(sb / 4)}
			if err := dev.Run(func(q *Queue) error {
				o, err := q.deltaNetStepRows(&l, Whole(out), Whole(x), n, sl)
				if err != nil {
					return err
				}
				return o.projectRows(q, Whole(out), n)
			}); err != nil {
				t.Fatal(err)
			}
			got, gotStates := download(t, out, n*hid), download(t, all, n*sb/4)
			for row, s := range mixerSlots {
				one := c.layer
				one.State = Whole(upload(t, states[int(s)*sb/4:(int(s)+1)*sb/4]))
				xr, o1 := upload(t, xs[row*hid:(row+1)*hid]), poisoned(t, hid)
				if err := dev.Run(func(q *Queue) error { return q.DeltaNetForward(&one, Whole(o1), Whole(xr), 1) }); err != nil {
					t.Fatal(err)
				}
				checkMixerRows(t, fmt.Sprintf("row %d (slot %d) output", row, s), got[row*hid:(row+1)*hid], download(t, o1, hid))
				checkMixerRows(t, fmt.Sprintf("slot %d state", s), gotStates[int(s)*sb/4:(int(s)+1)*sb/4], download(t, one.State.Block, sb/4))
			}
		})
	}
}

func TestAttentionStepRows(t *testing.T) { eachNumerics(t, testAttentionStepRows) }

func testAttentionStepRows(t *testing.T) {
	r := newRand(t)
	for _, g := range mixerShapes {
		t.Run(g.name, func(t *testing.T) {
			const capacity = 40
			n := len(mixerSlots)
			c := newAttentionCase(t, r, g.g, 8, capacity, true)
			ag, hid := c.layer.G, g.g.Hidden
			kvb := int(ag.KVBytes(capacity))
			caches := randomState(t, r, n*kvb/4)
			all := upload(t, caches)
			positions := []int32{17, 0, 39} // slot 2 at its last row of context
			pos := upload(t, positions)
			xs := randNonZero(r, n*hid)
			x, out := upload(t, xs), poisoned(t, n*hid)
			l := c.layer
			l.KV = Whole(all)
			sl := stepSlots{slots: Whole(upload(t, mixerSlots)), stride: int64(kvb / 4), pos: Whole(pos)}
			if err := dev.Run(func(q *Queue) error {
				o, err := q.attentionStepRows(&l, Whole(out), Whole(x), n, sl, nil)
				if err != nil {
					return err
				}
				if err := o.projectRows(q, Whole(out), n); err != nil {
					return err
				}
				return q.AddInt32Slots(Whole(pos), sl.slots, n, n, 1)
			}); err != nil {
				t.Fatal(err)
			}
			got, gotCaches := download(t, out, n*hid), download(t, all, n*kvb/4)
			var after [3]int32
			if err := Download(dev, after[:], pos, 0); err != nil {
				t.Fatal(err)
			}
			for s := range positions {
				if after[s] != positions[s]+1 {
					t.Errorf("slot %d at position %d after a step from %d", s, after[s], positions[s])
				}
			}
			for row, s := range mixerSlots {
				one := c.layer
				one.KV = Whole(upload(t, caches[int(s)*kvb/4:(int(s)+1)*kvb/4]))
				p1 := upload(t, positions[s:s+1])
				xr, o1 := upload(t, xs[row*hid:(row+1)*hid]), poisoned(t, hid)
				if err := dev.Run(func(q *Queue) error {
					return q.AttentionForward(&one, Whole(o1), Whole(xr), 1, Whole(p1), 0)
				}); err != nil {
					t.Fatal(err)
				}
				checkMixerRows(t, fmt.Sprintf("row %d (slot %d at %d) output", row, s, positions[s]), got[row*hid:(row+1)*hid], download(t, o1, hid))
				checkMixerRows(t, fmt.Sprintf("slot %d cache", s), gotCaches[int(s)*kvb/4:(int(s)+1)*kvb/4], download(t, one.KV.Block, kvb/4))
			}
		})
	}
}

//go:build cuda

package cuda

import (
	"fmt"
	"testing"
)

// TestAttentionStepAhead: the step's one-launch attention with the row's
// position and its first cached keys and values read before the PDL wait,
// behind a waited q/k/v projection (attnDecodeAhead, attn_decode_ahead_fast;
// docs/PERF.md "dec28"), gives the bits of the launch that reads them after
// it. Several steps of one layer (q/k/v projection, attention, output
// projection, the positions advanced) in one captured graph under PDL: each
// step's attention reads the key and value the one before appended and the
// position advanced two launches earlier, so one that read them before their
// writers finished would differ. One take's step and B-row steps of two and
// four takes (slots permuted, one take at its first row), Drama 3's geometry
// and the odd one, under fast.
func TestAttentionStepAhead(t *testing.T) {
	if dev.Info.Major < 9 || !dev.Info.PDL {
		t.Skip("PDL needs sm_90")
	}
	withFast(t)
	prevA, prevD := attnDecodeAhead, attnDecode
	attnDecode = true
	defer func() { attnDecodeAhead, attnDecode = prevA, prevD }()
	r := newRand(t)
	const steps, capacity = 5, 300
	for _, tc := range mixerShapes {
		for _, n := range []int{0, 2, 4} { // 0: the one-take step
			t.Run(fmt.Sprintf("%s/rows_%d", tc.name, n), func(t *testing.T) {
				rows := max(n, 1)
				c := newAttentionCase(t, r, tc.g, 8, capacity, true)
				ag, hid := c.layer.G, tc.g.Hidden
				kvb := int(ag.KVBytes(capacity))
				caches := randomState(t, r, rows*kvb/4)
				positions := []int32{70, 0, 33, 250}[:rows] // by slot
				slotIDs := []int32{1, 0, 3, 2}[:rows]
				if n == 0 {
					slotIDs = []int32{0}
				}
				x := upload(t, randNonZero(r, steps*rows*hid))
				dec := decodeCountersBlock(t, ag.decodeCounters(rows))
				run := func(ahead bool) (outs, kv []float32) {
					attnDecodeAhead = ahead
					l := c.layer
					all, pos := upload(t, caches), upload(t, positions)
					l.KV = Whole(all)
					sl := stepSlots{slots: Whole(upload(t, slotIDs)), stride: int64(kvb / 4), pos: Whole(pos)}
					if err := dev.Run(func(q *Queue) error {
						if q.attnInWaited(&l, rows, dec) != ahead {
							return fmt.Errorf("attnInWaited(%d) = %v with the reads ahead %v: the test would not compare them", rows, !ahead, ahead)
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
					out := poisoned(t, steps*rows*hid)
					runCaptured(t, func(q *Queue) error {
						for s := 0; s < steps; s++ {
							xi, oi := Whole(x).At(int64(s*rows*hid*4)), Whole(out).At(int64(s*rows*hid*4))
							if n == 0 {
								o, err := q.attentionUpToOut(&l, oi, xi, 1, Whole(pos), 0, nil, dec)
								if err != nil {
									return err
								}
								if err := firstErr(o.project(q, oi, 1), q.AddInt32(Whole(pos), 1)); err != nil {
									return err
								}
								continue
							}
							o, err := q.attentionStepRows(&l, oi, xi, rows, sl, dec)
							if err != nil {
								return err
							}
							if err := firstErr(o.projectRows(q, oi, rows), q.AddInt32Slots(Whole(pos), sl.slots, rows, rows, 1)); err != nil {
								return err
							}
						}
						return nil
					})
					checkCountersZero(t, fmt.Sprintf("ahead %v", ahead), dec, ag.decodeCounters(rows))
					return download(t, out, steps*rows*hid), download(t, all, rows*kvb/4)
				}
				wantO, wantKV := run(false)
				gotO, gotKV := run(true)
				if d, ulp := ULPDiff(gotO, wantO); d != 0 {
					t.Errorf("outputs of %d steps: %d of %d values differ with the reads ahead (up to %d ULP)", steps, d, len(wantO), ulp)
				}
				if d, ulp := ULPDiff(gotKV, wantKV); d != 0 {
					t.Errorf("caches after %d steps: %d of %d values differ with the reads ahead (up to %d ULP)", steps, d, len(wantKV), ulp)
				}
			})
		}
	}
}

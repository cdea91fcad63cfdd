//go:build cuda

package cuda

import (
	"fmt"
	"slices"
	"testing"
)

// TestRouteAhead: a step's expert launches with the routing published
// (route_ahead.go: the routed gate·up or moe_route counting the rows on
// the layer's word, the gate·up by ids and moe_down2 polling it before
// their wait) write what they write without it, bit for bit — ids,
// weights, gate·up, the routed and shared down projections — at one row
// (the routed gate·up publishes) and at 2, 3 and 4 (moe_route publishes).
// The word then holds the rows and the previous layer's is zero (fast);
// under exact nothing is published or polled. And with the word already
// set and the ids stale (a step stopped after its routing: the readers'
// guess is wrong whenever they read before the routing), the launches still
// write the same bits, ten times over: each block reads its id again after
// the wait and reloads where the guess was wrong.
func TestRouteAhead(t *testing.T) { eachNumerics(t, testRouteAhead) }

func testRouteAhead(t *testing.T) {
	r := newRand(t)
	for _, n := range []int{1, 2, 3, 4} {
		c := moeDownCase{true, 2048, 512, 512, 512, 32, 8, 512, 32, n, false} // Drama 3's widths, 32 experts
		t.Run(fmt.Sprintf("%d_rows", n), func(t *testing.T) {
			d := newMoEDownData(t, r, c)
			H, nk := c.h, c.n*c.k
			gateUpRows := 2 * c.p
			scales := make([]float32, c.e*FP8ScaleCount(gateUpRows, H))
			for i := range scales {
				scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
			}
			GW, GS := upload(t, randFP8(r, c.e*gateUpRows*H)), upload(t, scales)
			dense := randNonZero(r, c.n*d.dstride)
			for i := range dense {
				dense[i] *= 4
			}
			db, xb := upload(t, dense), upload(t, randNonZero(r, c.n*H))
			type outputs struct {
				ids      []int32
				wts, gu  []float32
				yr, ys   []float32
				routed   uint32 // the layer's word after the launches
				unrouted uint32 // the previous layer's
			}
			// run enqueues the step's expert launches times times on one
			// queue: without the routing published (mode "off"), published
			// ("on": the layer's word and the previous layer's preset to 0
			// and 5), or with the layer's word preset to the rows and the
			// ids made stale before each launch ("stale").
			staleIDs := make([]int32, nk)
			for i := range staleIDs {
				staleIDs[i] = int32(c.e - 1 - i%c.e)
			}
			stale := upload(t, staleIDs)
			run := func(mode string, times int) outputs {
				ids, wts, gu := poisoned(t, nk), poisoned(t, nk), poisoned(t, nk*gateUpRows)
				yr, ys := poisoned(t, max(nk, c.k+1)*H), poisoned(t, c.n*H)
				preset := uint32(0)
				if mode == "stale" {
					preset = uint32(c.n)
				}
				words := upload(t, []uint32{preset, 5})
				var rf RouteFlags
				switch mode {
				case "on":
					rf = RouteFlags{Routed: devPtr(words), Unroute: devPtr(words).Add(4)}
				case "stale":
					rf = RouteFlags{Routed: devPtr(words)}
				}
				if err := dev.Run(func(q *Queue) error {
					for range times {
						if mode == "stale" {
							if err := q.Copy(ids, stale, int64(nk*4)); err != nil {
								return err
							}
						}
						// At one row the routed gate·up publishes; at more,
						// moe_route, for the gate·up by ids to poll.
						g := q.backboneGemv(Gemv{Rows: gateUpRows, Cols: H, N: nk, Ids: ids, Mats: c.e}, true, siteOther)
						ok, err := q.MoEGateUpRoute(g, gu, ids, wts, db, c.n, d.dstride, c.E, c.k, GW, GS, xb, H, rf)
						if err != nil {
							return err
						}
						if !ok {
							return fmt.Errorf("no routed gate·up instance for %s", g.Variant.Name())
						}
						if c.n == 1 {
							err = q.MoEDown(yr, d.W, d.S, 0, 0, true, c.e, ids, gu, c.p, c.i, c.ip, c.k, d.Ws, db, c.E, c.is, H, ExpertRef{}, rf)
						} else {
							err = q.MoEDownRows(yr, ys, d.W, d.S, 0, 0, true, c.e, ids, gu, c.p, c.i, c.ip, c.k, d.Ws, db, d.dstride, c.E, c.is, H, c.n, ExpertRef{}, rf)
						}
						if err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				o := outputs{ids: make([]int32, nk), wts: download(t, wts, nk), gu: download(t, gu, nk*gateUpRows)}
				if c.n == 1 {
					y := download(t, yr, (c.k+1)*H)
					o.yr, o.ys = y[:c.k*H], y[c.k*H:]
				} else {
					o.yr, o.ys = download(t, yr, nk*H), download(t, ys, c.n*H)
				}
				w := make([]uint32, 2)
				if err := firstErr(Download(dev, o.ids, ids, 0), Download(dev, w, words, 0)); err != nil {
					t.Fatal(err)
				}
				o.routed, o.unrouted = w[0], w[1]
				return o
			}
			same := func(what string, got, want outputs) {
				t.Helper()
				if !slices.Equal(got.ids, want.ids) {
					t.Errorf("%s: ids %v, without %v", what, got.ids, want.ids)
				}
				for _, v := range []struct {
					part      string
					got, want []float32
				}{{"weights", got.wts, want.wts}, {"gate·up", got.gu, want.gu}, {"routed down", got.yr, want.yr}, {"shared down", got.ys, want.ys}} {
					if differ, maxULP := ULPDiff(v.got, v.want); differ != 0 {
						t.Errorf("%s: %s: %d of %d values differ from the launches without (max %d ULP)", what, v.part, differ, len(v.want), maxULP)
					}
				}
			}
			want := run("off", 1)
			got := run("on", 1)
			same("published", got, want)
			wantRouted, wantUnrouted := uint32(c.n), uint32(0)
			if dev.Numerics.Exact() {
				wantRouted, wantUnrouted = 0, 5
			}
			if got.routed != wantRouted || got.unrouted != wantUnrouted {
				t.Errorf("words after the step: routed %d, the previous layer's %d; want %d and %d", got.routed, got.unrouted, wantRouted, wantUnrouted)
			}
			// A word left set and stale ids: the readers guess at once.
			same("stale", run("stale", 10), want)
			t.Logf("%s, %d rows: the same bits with the routing published, and with a stale word", dev.Numerics, c.n)
		})
	}
}

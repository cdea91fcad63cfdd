//go:build cuda

package cuda

import (
	"fmt"
	"slices"
	"testing"
)

// TestMoEGateUpIdsMatchesRouted: a B-row step's gate·up under
// $PROSCENIUM_GPU_SPLIT_ROUTE=rows (moe_route, then moe_gate_up_ids_*)
// writes the ids, weights and gate·up outputs of the routed launch
// (moe_gate_up_*, itself held to the two launches of MoERoute and the
// gathered GEMV by TestMoEGateUpRoute), bit for bit, under both policies,
// for each instance the choosers give at these shapes (FP8 t32r4u4 at
// Drama 3's 2048 → 1024, short rows, BF16); one row keeps the routed launch.
func TestMoEGateUpIdsMatchesRouted(t *testing.T) { eachNumerics(t, testMoEGateUpIdsMatchesRouted) }

func testMoEGateUpIdsMatchesRouted(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		fp8                 bool
		E, k, rows, cols, n int
	}{
		{true, 32, 8, 1024, 2048, 4}, {true, 32, 8, 1024, 2048, 2}, {true, 6, 3, 64, 256, 3},
		{false, 8, 4, 256, 512, 2}, {false, 8, 2, 128, 1024, 5}, {true, 32, 8, 1024, 2048, 1},
	} {
		t.Run(fmt.Sprintf("fp8=%v_%dexperts_top%d_%dx%d_%drows", c.fp8, c.E, c.k, c.rows, c.cols, c.n), func(t *testing.T) {
			per := c.rows * c.cols
			var W, S *Block
			if c.fp8 {
				scales := make([]float32, c.E*FP8ScaleCount(c.rows, c.cols))
				for i := range scales {
					scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
				}
				W, S = upload(t, randFP8(r, c.E*per)), upload(t, scales)
			} else {
				W = upload(t, bf16Bytes(bf16s(randNonZero(r, c.E*per))))
			}
			dstride, xpitch := c.E+5, c.cols+16
			dense := randNonZero(r, c.n*dstride)
			for i := range dense {
				dense[i] *= 4
			}
			db, xb := upload(t, dense), upload(t, randNonZero(r, c.n*xpitch))
			nk := c.n * c.k
			run := func(split bool) gateUpRouted {
				ids, wts, gu := poisoned(t, nk), poisoned(t, nk), poisoned(t, nk*c.rows)
				prev := splitRouteRows
				splitRouteRows = split
				defer func() { splitRouteRows = prev }()
				var ok bool
				if err := dev.Run(func(q *Queue) error {
					g := q.backboneGemv(Gemv{Rows: c.rows, Cols: c.cols, N: nk, Ids: ids, Mats: c.E, XStride: xpitch}, c.fp8, siteOther)
					var err error
					ok, err = q.MoEGateUpRoute(g, gu, ids, wts, db, c.n, dstride, c.E, c.k, W, S, xb, xpitch)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if !ok {
					t.Fatalf("split %v: no instance for the chosen GEMV", split)
				}
				v := gateUpRouted{ids: make([]int32, nk), wts: download(t, wts, nk), gu: download(t, gu, nk*c.rows)}
				if err := Download(dev, v.ids, ids, 0); err != nil {
					t.Fatal(err)
				}
				return v
			}
			routed, split := run(false), run(true)
			if !slices.Equal(split.ids, routed.ids) {
				t.Fatalf("ids %v, routed launch's %v", split.ids, routed.ids)
			}
			for _, v := range []struct {
				part      string
				got, want []float32
			}{{"weights", split.wts, routed.wts}, {"gate·up", split.gu, routed.gu}} {
				if differ, maxULP := ULPDiff(v.got, v.want); differ != 0 {
					t.Errorf("%s: %d of %d differ from the routed launch's (max %d ULP)", v.part, differ, len(v.want), maxULP)
				} else {
					t.Logf("split route %s %s: %d values, the same bits", dev.Numerics, v.part, len(v.want))
				}
			}
		})
	}
}

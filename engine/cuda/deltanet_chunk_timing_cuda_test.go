//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"proscenium/engine/drama3"
)

// TestDeltaNetChunkTiming prints the device time of one DeltaNet layer's
// chunked prefill at Drama 3's geometry under each numerics policy (chunk28:
// whether the fast instances pay): the mixer after its projections
// (deltanet_chunk_prep … _norm) and the rule alone (_intra, _solve, _state),
// for passes of 60, 300 and 700 rows; under fast with each intra kernel
// (dnc13: "old" deltanet_chunk_intra_fast, "new" deltanet_chunk_intra_tiled)
// and the intra launch alone. The mean of reps calls after one warm-up,
// stream-ordered with PDL as the backbone launches them. The scratch holds
// a real pass's projections first (DeltaNetForward), so the kernels see
// values of the model's range. Nothing is asserted about the figures.
func TestDeltaNetChunkTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	r := newRand(t)
	const maxRows, reps = 700, 20
	prevMode := deltaNetChunkMode
	defer func() { deltaNetChunkMode = prevMode }()
	eachNumerics(t, func(t *testing.T) {
		g := fullGeometry
		dn := newDeltaNetCase(t, r, g, maxRows, true)
		dg := dn.layer.G
		x := Whole(upload(t, randNonZero(r, maxRows*g.Hidden)))
		out := Whole(alloc(t, maxRows*g.Hidden*4))
		if err := dev.Run(func(q *Queue) error { return q.DeltaNetForward(&dn.layer, out, x, maxRows) }); err != nil {
			t.Fatal(err)
		}
		timeIt := func(what string, f func(q *Queue) error) {
			t.Helper()
			if err := dev.Run(f); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			ms, err := dev.Time(func(q *Queue) error {
				for i := 0; i < reps; i++ {
					if err := f(q); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			fmt.Printf("timing %-5s %-58s %9.1f µs\n", dev.Numerics, what, 1000*ms/reps)
		}
		variants := []deltaNetChunkKernels{deltaNetChunkOld}
		if dev.Numerics == drama3.NumericsFast {
			variants = []deltaNetChunkKernels{deltaNetChunkOld, deltaNetChunkIntra}
		}
		for _, n := range []int{60, 300, 700} {
			for _, mode := range variants {
				deltaNetChunkMode = mode
				v := map[deltaNetChunkKernels]string{deltaNetChunkOld: "old", deltaNetChunkIntra: "intra"}[mode]
				timeIt(fmt.Sprintf("deltanet chunked mixer (prep … norm) %s, %d rows", v, n),
					func(q *Queue) error { return q.deltaNetMix(&dn.layer, n, true) })
				timeIt(fmt.Sprintf("deltanet chunked rule (intra … state) %s, %d rows", v, n), func(q *Queue) error {
					return q.deltaNetChunkRule(&dn.layer, dn.layer.Scratch.At(dg.scratchLayout(maxRows)),
						dn.layer.State.At(4*int64(dg.convStateFloats())), n)
				})
				timeIt(fmt.Sprintf("deltanet chunk intra %s, %d rows", v, n),
					func(q *Queue) error { return q.deltaNetChunkIntra(&dn.layer, n) })
			}
		}
	})
}

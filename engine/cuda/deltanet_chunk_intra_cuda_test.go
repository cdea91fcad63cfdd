//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/drama3"
)

// TestDeltaNetChunkIntraTiled runs the fast chunked rule (intra, solve,
// state) with each intra kernel, deltanet_chunk_intra_fast and dnc13's
// deltanet_chunk_intra_tiled, on the same inputs and initial state (those of
// TestDeltaNetChunkRule), their outputs (cum, qm, am) poisoned with NaN
// before each run, at 1 … 700 rows: Drama 3's head dims (128/128), the odd
// golden checkpoint's (20/28), key dims past a multiple of 4 (38/40) and
// near the chunked form's bound 192 (190/36). Each rule must be within 1e-5
// of the CPU's chunked form (outputs and final state) and the two within
// 1e-5 of each other; the new kernel's cum must be the old one's bits (the
// same chain), its qm and am within 1e-5 of the old ones with zeros
// (above the diagonal, past the chunk's rows) exactly where they are.
func TestDeltaNetChunkIntraTiled(t *testing.T) {
	r := newRand(t)
	prev, prevMode := dev.Numerics, deltaNetChunkMode
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics, deltaNetChunkMode = prev, prevMode }()
	rows := []int{1, 2, 33, 63, 64, 65, 97, 130, 300, 700}
	if testing.Short() {
		rows = []int{1, 65, 300}
	}
	for _, tc := range chunkKernelShapes() {
		for _, n := range rows {
			t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) {
				run, want, wantS, layer := deltaNetChunkRuleCaseLayer(t, r, tc.g, n)
				dg := layer.G
				s := dg.chunkScratch(n)
				chunks := (n + deltaNetChunkRows - 1) / deltaNetChunkRows
				mat := dg.ValueHeads * chunks * deltaNetChunkRows * deltaNetChunkRows
				// intra runs the selected kernel on poisoned outputs and
				// returns them with the rule's.
				intra := func(tiled bool) (o, st, cum, qm, am []float32) {
					t.Helper()
					deltaNetChunkMode = map[bool]deltaNetChunkKernels{false: deltaNetChunkOld, true: deltaNetChunkIntra}[tiled]
					nan := func(k int) []float32 {
						x := make([]float32, k)
						for i := range x {
							x[i] = math.Float32frombits(nanBits)
						}
						return x
					}
					for _, u := range []struct {
						off int64
						k   int
					}{{s.cum, dg.ValueHeads * n}, {s.qm, mat}, {s.am, mat}} {
						if err := Upload(dev, layer.Scratch.Block, u.off, nan(u.k)); err != nil {
							t.Fatal(err)
						}
					}
					o, st = run()
					cum, qm, am = make([]float32, dg.ValueHeads*n), make([]float32, mat), make([]float32, mat)
					for _, d := range []struct {
						off int64
						x   []float32
					}{{s.cum, cum}, {s.qm, qm}, {s.am, am}} {
						if err := Download(dev, d.x, layer.Scratch.Block, d.off); err != nil {
							t.Fatal(err)
						}
					}
					return o, st, cum, qm, am
				}
				oldO, oldS, oldC, oldQ, oldA := intra(false)
				newO, newS, newC, newQ, newA := intra(true)
				checkClose(t, "old outputs", oldO, want, 1e-5)
				checkClose(t, "old state", oldS, wantS, 1e-5)
				checkClose(t, "new outputs", newO, want, 1e-5)
				checkClose(t, "new state", newS, wantS, 1e-5)
				checkClose(t, "new vs old outputs", newO, oldO, 1e-5)
				checkClose(t, "new vs old state", newS, oldS, 1e-5)
				for i := range oldC {
					if math.Float32bits(newC[i]) != math.Float32bits(oldC[i]) {
						t.Fatalf("cum[%d]: %g, the old kernel %g", i, newC[i], oldC[i])
					}
				}
				for _, m := range []struct {
					what     string
					got, ref []float32
				}{{"qm", newQ, oldQ}, {"am", newA, oldA}} {
					// The zeros above the diagonal are written: where one
					// kernel has 0 the other must too, unless its value is
					// one that sums in another order cancel or decays
					// underflow to 0 (session 15: −2.2e-14 beside 0 in a
					// full-geometry 300-row matrix), below 1e-6 of the
					// matrix's largest.
					nonzero, most := false, 0.0
					for i := range m.ref {
						most = max(most, math.Abs(float64(m.ref[i])))
					}
					for i := range m.ref {
						if (m.got[i] == 0) != (m.ref[i] == 0) && math.Abs(float64(m.got[i])+float64(m.ref[i])) > 1e-6*most {
							t.Fatalf("%s[%d]: %g, the old kernel %g (zeros differ)", m.what, i, m.got[i], m.ref[i])
						}
						nonzero = nonzero || m.ref[i] != 0
					}
					if nonzero { // all zeros (am of one row): matched exactly above; the relative error would be 0/0
						checkClose(t, m.what, m.got, m.ref, 1e-5)
					}
				}
			})
		}
	}
}

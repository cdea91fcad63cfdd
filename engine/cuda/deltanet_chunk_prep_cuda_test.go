//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/drama3"
)

// TestDeltaNetChunkPrepTiled runs the fast chunked prep both ways,
// deltanet_chunk_prep_fast and dnprep16's deltanet_chunk_prep_tiled_fast, on
// the same projected rows, conv weights and conv window (random, so the
// first K − 1 rows read a window that is not zero), their outputs poisoned
// with NaN before each run, at 1 … 300 rows (blocks of one row, a ragged
// last block, exactly one and several blocks): Drama 3's head dims and the
// test geometries of TestDeltaNetChunkIntraTiled. Every output (q and k
// normed, v, β, the log decay) must be written and within 1e-6 of the old
// kernel's relative to the row's largest (the same expressions on the same
// values: the bits are expected and the differences logged).
func TestDeltaNetChunkPrepTiled(t *testing.T) {
	r := newRand(t)
	prev, prevPrep := dev.Numerics, deltaNetPrep
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics, deltaNetPrep = prev, prevPrep }()
	for _, tc := range chunkKernelShapes() {
		const maxRows = 300
		c := newDeltaNetCase(t, r, tc.g, maxRows, true)
		l := &c.layer
		g := l.G
		if g.tiledPrepRows() == 0 {
			t.Fatalf("%s: the tiled prep does not take %+v", tc.name, g)
		}
		// A conv window that is not zero: the first rows' taps read it.
		if err := Upload(dev, l.State.Block, l.State.Off, scaled(r, g.convStateFloats(), 1)); err != nil {
			t.Fatal(err)
		}
		pw := g.ProjWidth()
		proj := alloc(t, maxRows*pw*4)
		s := g.chunkScratch(maxRows)
		nv, dk, dv := g.ValueHeads, g.KeyDim, g.ValueDim
		for _, n := range []int{1, 2, 3, 5, 16, 17, 33, 300} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) {
				if err := Upload(dev, proj, 0, scaled(r, n*pw, 2)); err != nil {
					t.Fatal(err)
				}
				outs := []struct {
					name string
					off  int64
					k    int
				}{{"qn", s.qn, nv * n * dk}, {"kn", s.kn, nv * n * dk}, {"v", s.v, nv * n * dv}, {"beta", s.beta, nv * n}, {"decay", s.decay, nv * n}}
				run := func(which string) [][]float32 {
					t.Helper()
					deltaNetPrep = which
					for _, o := range outs {
						nan := make([]float32, o.k)
						for i := range nan {
							nan[i] = math.Float32frombits(nanBits)
						}
						if err := Upload(dev, l.Scratch.Block, l.Scratch.Off+o.off, nan); err != nil {
							t.Fatal(err)
						}
					}
					if err := dev.Run(func(q *Queue) error { return q.deltaNetChunkPrep(l, Whole(proj), n) }); err != nil {
						t.Fatal(err)
					}
					var got [][]float32
					for _, o := range outs {
						v := make([]float32, o.k)
						if err := Download(dev, v, l.Scratch.Block, l.Scratch.Off+o.off); err != nil {
							t.Fatal(err)
						}
						got = append(got, v)
					}
					return got
				}
				old, tiled := run("old"), run("tiled")
				for i, o := range outs {
					per := o.k / (nv * n) // values a (head, row)
					differ, worst := 0, 0.0
					for row := 0; row < nv*n; row++ {
						a, b := old[i][row*per:(row+1)*per], tiled[i][row*per:(row+1)*per]
						big := 0.0
						for _, x := range a {
							big = math.Max(big, math.Abs(float64(x)))
						}
						for j := range a {
							if math.IsNaN(float64(b[j])) || math.IsNaN(float64(a[j])) {
								t.Fatalf("%s: head-row %d value %d: old %g, tiled %g (unwritten)", o.name, row, j, a[j], b[j])
							}
							if math.Float32bits(a[j]) != math.Float32bits(b[j]) {
								differ++
								worst = math.Max(worst, math.Abs(float64(a[j])-float64(b[j]))/math.Max(big, 1e-30))
							}
						}
					}
					t.Logf("%s: %d of %d values differ from the old kernel's bits, worst %.2e of the row's largest", o.name, differ, o.k, worst)
					if worst > 1e-6 {
						t.Errorf("%s: the tiled prep is %.2e from the old kernel (relative to the row's largest), want ≤ 1e-6", o.name, worst)
					}
				}
			})
		}
	}
}

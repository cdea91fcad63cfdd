//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// TestChainProbe measures what the decode step's chain of dependent launches
// costs against one persistent kernel (kernels/chain_probe.cu, docs/PERF.md
// "chain19", "chain20"): 40 probe layers of the step's three dense BF16 projections
// (in 12352 × 2048, out 2048 × 4096, dense 1281 × 2048: 72.6 MB a layer,
// 2.9 GB in all) with a mixer step and two norms between them, run
//
//   - as launches: the step's GEMV instances and one-block norms, six
//     launches a layer with PDL, in one graph; the GEMVs alone, 120
//     launches (no small operations); and the other launchVariants (norms
//     of 256 threads, the step's own norm kernels, GEMVs with their first
//     weights ahead of the PDL wait, docs/PERF.md "chain20");
//   - persistent, phases: one launch, the same six operations a layer as
//     phases between grid barriers, a block of 16 warps an SM, each warp
//     with two rows (one of the out-projection's) of weights in flight, the
//     next GEMV's loaded before the barrier that releases its input;
//   - persistent, fused: the mixer step and the norms done by every block
//     while staging the next GEMV's input, three barriers a layer;
//   - persistent, no barriers: the fused kernel with its barriers left out
//     (its values wrong, not checked): the streaming and stagings alone.
//
// It checks the variants agree (final residual within 1e-4 of the launches',
// relative; not the GEMVs alone, nor the step's norms with their other
// gain) and prints each one's device time a chain and its rate; a
// measurement, not a speed assertion.
//
// The in-projection is timed at the model's 12352 rows and, where the
// persistent kernel's warps (16 an SM) do not divide them, also at the next
// multiple of the warps: its barriers wait for the warps with a row more
// than the others, and the launches' blocks do not (a row of 2048 BF16
// weights is a warp's unit either way).
func TestChainProbe(t *testing.T) {
	if testing.Short() {
		t.Skip("timing: 2.9 GB of weights")
	}
	const modelRows = 12352
	warps := dev.Info.Multiprocs * kernel.ChainWarps
	for _, rowsA := range []int{modelRows, (modelRows + warps - 1) / warps * warps} {
		t.Run(fmt.Sprintf("in%d", rowsA), func(t *testing.T) { chainProbe(t, rowsA) })
		if rowsA%warps == 0 {
			break
		}
	}
}

func chainProbe(t *testing.T, rowsA int) {
	const layers, H, inner, rowsC, gate, eps = 40, 2048, 4096, 1281, 8192, float32(1e-6)
	blocks := dev.Info.Multiprocs // one block an SM, all resident
	A, B, C := alloc(t, layers*rowsA*H*2), alloc(t, layers*H*inner*2), alloc(t, layers*rowsC*H*2)
	g, x0 := alloc(t, H*4), alloc(t, H*4)
	// z is H wide, its tail past rowsC zero: the product's norms add a whole row.
	u, v, w, z := alloc(t, rowsA*4), alloc(t, inner*4), alloc(t, H*4), alloc(t, H*4)
	xa, xb, n := alloc(t, H*4), alloc(t, H*4), alloc(t, H*4)
	ctr := alloc(t, 4*kernel.ChainCounters*kernel.ChainCounterStride)
	p := func(b *Block) kernel.Ptr { return kernel.Ptr(b.Ptr) }
	if err := dev.Run(func(q *Queue) error {
		for i, m := range []struct {
			b      *Block
			n      int64
			cols   int
			bf16   bool
			lo, hi float32
		}{{A, int64(layers * rowsA * H), H, true, 0, 0}, {B, int64(layers * H * inner), inner, true, 0, 0},
			{C, int64(layers * rowsC * H), H, true, 0, 0}, {g, H, 0, false, 0.5, 1.5}, {x0, H, 0, false, -1, 1}} {
			if m.bf16 {
				s := float32(1 / math.Sqrt(float64(m.cols)))
				if err := kernel.FillRandomBF16(q, [3]int{4096, 1, 1}, 256, p(m.b), m.n, uint32(i+1), -s, s); err != nil {
					return err
				}
			} else if err := kernel.FillRandomF32(q, [3]int{8, 1, 1}, 256, p(m.b), m.n, uint32(i+1), m.lo, m.hi); err != nil {
				return err
			}
		}
		if err := q.ZeroTensor(Tensor{Block: z}, z.Bytes); err != nil {
			return err
		}
		return q.ZeroTensor(Tensor{Block: ctr}, ctr.Bytes)
	}); err != nil {
		t.Fatal(err)
	}
	at := func(b *Block, off, bytes int) *Block {
		return &Block{Kind: b.Kind, Ptr: b.Ptr + uintptr(off), Bytes: int64(bytes)}
	}
	// start puts x0 in xa and its norm in n.
	start := func(q *Queue) error {
		if err := q.Copy(xa, x0, H*4); err != nil {
			return err
		}
		return kernel.ChainNormFast(q, [3]int{1, 1, 1}, 1024, p(xa), p(w), 0, p(n), p(g), H, eps)
	}
	var lv launchVariant
	launches := func(q *Queue) error {
		gemv := func(y, W, x *Block, rows, cols int) error {
			return q.GemvBF16(Gemv{Rows: rows, Cols: cols, N: 1, Mats: 1, Variant: ChooseGemv(false, rows, cols, 1),
				WeightsAhead: lv.ahead}, y, W, x)
		}
		norm := func(d *Block, nd int) error {
			switch {
			case lv.gemvsOnly:
				return nil
			case lv.product == "cluster":
				return kernel.AddRMSNormZCClusterFast(q, [3]int{kernel.NormCluster, 1, 1}, kernel.NormClusterThreads,
					p(xa), p(d), p(n), p(g), H, H, eps)
			case lv.product == "block":
				return kernel.AddRMSNormZC(q, kernel.Fast, [3]int{1, 1, 1}, lv.normThreads, p(xa), p(d), p(n), p(g), H, H, eps)
			}
			return kernel.ChainNormFast(q, [3]int{1, 1, 1}, lv.normThreads, p(xa), p(d), nd, p(n), p(g), H, eps)
		}
		for l := 0; l < layers; l++ {
			if err := gemv(u, at(A, l*rowsA*H*2, rowsA*H*2), n, rowsA, H); err != nil {
				return err
			}
			if !lv.gemvsOnly {
				if err := kernel.ChainMixFast(q, [3]int{16, 1, 1}, 256, p(v), p(u), inner, gate); err != nil {
					return err
				}
			}
			if err := firstErrFn(
				func() error { return gemv(w, at(B, l*H*inner*2, H*inner*2), v, H, inner) },
				func() error { return norm(w, H) },
				func() error { return gemv(z, at(C, l*rowsC*H*2, rowsC*H*2), n, rowsC, H) },
				func() error { return norm(z, rowsC) }); err != nil {
				return err
			}
		}
		return nil
	}
	// The barrier counters only grow: each launch starts from the barriers
	// the launches before it completed.
	done := uint32(0)
	persistent := func(fused int) func(q *Queue) error {
		return func(q *Queue) error {
			barriers := uint32(layers * []int{6, 3, 0}[fused])
			a := kernel.ChainPersistentFastArgs{A: p(A), B: p(B), C: p(C), G: p(g), U: p(u), V: p(v), W: p(w), Z: p(z),
				Xa: p(xa), Xb: p(xb), N: p(n), Layers: layers, RowsA: rowsA, Hidden: H, Inner: inner, RowsC: rowsC, Gate: gate,
				Eps: eps, Ctr: p(ctr), Base: done}
			a.Fused = fused
			done += barriers
			return kernel.ChainPersistentFast(q, [3]int{blocks, 1, 1}, kernel.ChainThreads, a)
		}
	}
	final := func(name string, chain func(q *Queue) error) []float32 {
		if err := dev.Run(func(q *Queue) error {
			if err := start(q); err != nil {
				return err
			}
			return chain(q)
		}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out := make([]float32, H)
		if err := Download(dev, out, xa, 0); err != nil {
			t.Fatal(err)
		}
		return out
	}
	lv = launchVariants[0]
	want := final("launches", launches)
	// The persistent kernel's modes (its fused argument); the last leaves its
	// barriers out, so only the others' values are checked.
	persistentNames := []string{"persistent, phases", "persistent, fused", "persistent, no barriers"}
	for fused, name := range persistentNames[:2] {
		rel := relErr(final(name, persistent(fused)), want)
		t.Logf("%s: final residual within %.2g of the launches' (relative L2)", name, rel)
		if !(rel <= 1e-4) {
			t.Errorf("%s: final residual %.3g from the launches' (bound 1e-4)", name, rel)
		}
	}
	const reps = 20
	bytes := float64(layers) * float64(rowsA*H+H*inner+rowsC*H) * 2
	report := func(name string, launchesPer int, ms float64) {
		fmt.Printf("chain probe in %5d rows %-26s %8.3f ms a chain of %d layers, %3d launches, %6.0f GB/s of weights (%.2f GB), %5.1f µs a layer\n",
			rowsA, name, ms, layers, launchesPer, bytes/(ms*1e6), bytes/1e9, 1000*ms/layers)
	}
	for _, lv = range launchVariants {
		got := final(lv.name, launches)
		if d := relErr(got, want); !lv.gemvsOnly && lv.product == "" && !(d <= 1e-4) {
			t.Errorf("%s: final residual %.3g from the launches' (relative L2, bound 1e-4)", lv.name, d)
		}
		var graph *Graph
		if err := dev.Run(func(q *Queue) (err error) {
			graph, err = q.Capture(launches)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		replay := func(q *Queue) error {
			for i := 0; i < reps; i++ {
				if err := q.LaunchGraph(graph); err != nil {
					return err
				}
			}
			return nil
		}
		ms, err := dev.Time(replay)
		if err == nil {
			ms, err = dev.Time(replay)
		}
		kernels := graph.Kernels()
		dev.Run(func(*Queue) error { graph.Destroy(); return nil })
		if err != nil {
			t.Fatal(err)
		}
		report(lv.name, kernels, ms/reps)
	}
	for fused, name := range persistentNames {
		run := persistent(fused)
		many := func(q *Queue) error {
			for i := 0; i < reps; i++ {
				if err := run(q); err != nil {
					return err
				}
			}
			return nil
		}
		ms, err := dev.Time(many)
		if err == nil {
			ms, err = dev.Time(many)
		}
		if err != nil {
			t.Fatal(err)
		}
		report(name, 1, ms/reps)
	}
}

// launchVariant is one way TestChainProbe runs its chain as launches.
type launchVariant struct {
	name        string
	gemvsOnly   bool // the GEMVs alone, no small operations
	normThreads int  // the norms' block
	ahead       bool // the GEMVs' first weights loaded before their PDL wait (Gemv.WeightsAhead)
	// product: the norms are the step's own kernel (its gain 1 + g, so
	// other values, not checked): "cluster" (add_rmsnorm_zc_cluster_fast,
	// the one-row step's) or "block" (add_rmsnorm_zc_fast, one block of
	// normThreads).
	product string
}

// launchVariants: the first is chain19's baseline (one-block norms of 1024
// threads, whose values the others are checked against); norms of 256
// threads fit beside a GEMV's blocks (1024 threads of 62 registers need a
// whole multiprocessor); the step itself runs the cluster norms.
var launchVariants = []launchVariant{
	{name: "launches (graph, PDL)", normThreads: 1024},
	{name: "GEMVs alone (graph, PDL)", gemvsOnly: true, normThreads: 1024},
	{name: "launches, norms of 256", normThreads: 256},
	{name: "launches, GEMV weights ahead", normThreads: 1024, ahead: true},
	{name: "GEMVs alone, weights ahead", gemvsOnly: true, normThreads: 1024, ahead: true},
	{name: "launches, norms of 256, ahead", normThreads: 256, ahead: true},
	{name: "launches, the step's cluster norms", product: "cluster"},
	{name: "launches, the step's one-block norms", normThreads: 1024, product: "block"},
}

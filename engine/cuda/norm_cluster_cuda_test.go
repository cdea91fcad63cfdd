//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// TestNormCluster checks norm34's cluster kernels (add_rmsnorm_zc_cluster_fast,
// moe_combine_norm_cluster_fast), launched through their bindings so they run
// whatever $PROSCENIUM_GPU_NORM_CLUSTER says, against the CPU and against
// today's one-block fast kernels on the same inputs: Drama 3's width at one
// row and B rows, and odd shapes (columns not a multiple of the cluster, a
// rank with no columns, a padded pitch, no residual, more routed experts
// than the combine holds in registers, two columns a thread). Then that the
// switch sends the Queue's calls to them (same bits as the binding) for the
// step's row counts only, and never under exact.
func TestNormCluster(t *testing.T) {
	if dev.Info.Major < 9 {
		t.Skip("no thread block clusters before sm_90: the cluster kernels never run here")
	}
	prev, prevSwitch := dev.Numerics, normCluster
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics, normCluster = prev, prevSwitch }()
	r := newRand(t)

	type addCase struct {
		n, H, pitch int
		noY         bool
	}
	addNorm := func(t *testing.T, c addCase, cluster bool, x0, y, w []float32) (x, normed []float32) {
		xb, nb, wb := upload(t, x0), poisoned(t, c.n*c.pitch), upload(t, w)
		var yb *Block
		if !c.noY {
			yb = upload(t, y)
		}
		if err := dev.Run(func(q *Queue) error {
			if cluster {
				return kernel.AddRMSNormZCClusterFast(q, [3]int{kernel.NormCluster, c.n, 1}, kernel.NormClusterThreads,
					devPtr(xb), devPtr(yb), devPtr(nb), devPtr(wb), c.H, c.pitch, 1e-6)
			}
			normCluster = false
			return q.AddRMSNormZC(xb, yb, nb, wb, c.n, c.H, c.pitch, 1e-6)
		}); err != nil {
			t.Fatal(err)
		}
		return download(t, xb, c.n*c.H), download(t, nb, c.n*c.pitch)
	}
	for _, c := range []addCase{{1, 2048, 2048, false}, {4, 2048, 2048, false}, {8, 2048, 2048, false},
		{3, 136, 144, false}, {2, 100, 112, true}, {2, 4096, 4096, false}, {1, 7, 16, false}} {
		t.Run(fmt.Sprintf("addnorm_%drows_%dwide_pitch%d_noy%v", c.n, c.H, c.pitch, c.noY), func(t *testing.T) {
			x0, y, w := randNonZero(r, c.n*c.H), randNonZero(r, c.n*c.H), randNonZero(r, c.H)
			refX := append([]float32(nil), x0...)
			if !c.noY {
				cpu.Add(refX, y)
			}
			refN := make([]float32, c.n*c.pitch)
			for i := 0; i < c.n; i++ {
				cpu.RMSNormZeroCentred(refN[i*c.pitch:i*c.pitch+c.H], refX[i*c.H:(i+1)*c.H], w, 1e-6)
			}
			gx, gn := addNorm(t, c, true, x0, y, w)
			ox, on := addNorm(t, c, false, x0, y, w)
			checkClose(t, "cluster x against the CPU", gx, refX, 0)
			checkClose(t, "cluster normed against the CPU", gn, refN, 1e-6)
			checkClose(t, "cluster normed against the one-block kernel", gn, on, 1e-6)
			checkClose(t, "one-block x", ox, refX, 0)
			differ, maxULP := ULPDiff(gn, on)
			t.Logf("cluster against one-block: %d/%d normed values differ, max %d ULP", differ, len(on), maxULP)
		})
	}

	type combineCase struct{ n, H, k, stride, sgcol, pitch int }
	combine := func(t *testing.T, c combineCase, cluster bool, x0, yr, wts, ys, dense, nw []float32) (x, normed []float32) {
		xb, nb := upload(t, x0), poisoned(t, c.n*c.pitch)
		yrb, wb, ysb, db, nwb := upload(t, yr), upload(t, wts), upload(t, ys), upload(t, dense), upload(t, nw)
		if err := dev.Run(func(q *Queue) error {
			if cluster {
				return kernel.MoECombineNormClusterFast(q, [3]int{kernel.NormCluster, c.n, 1}, kernel.NormClusterThreads,
					devPtr(xb), devPtr(yrb), devPtr(wb), devPtr(ysb), devPtr(db), c.stride, c.sgcol, c.H, c.k, devPtr(nb),
					devPtr(nwb), c.pitch, 1e-6)
			}
			normCluster = false
			return q.MoECombineNorm(xb, yrb, wb, ysb, db, c.n, c.stride, c.sgcol, c.H, c.k, nil, nb, nwb, c.pitch, 1e-6)
		}); err != nil {
			t.Fatal(err)
		}
		return download(t, xb, c.n*c.H), download(t, nb, c.n*c.pitch)
	}
	for _, c := range []combineCase{{1, 2048, 8, 1281, 1280, 2048}, {4, 2048, 8, 1281, 1280, 2048},
		{8, 2048, 8, 1281, 1280, 2048}, {3, 136, 3, 119, 118, 144}, {2, 300, 10, 41, 40, 304}} {
		t.Run(fmt.Sprintf("combine_%drows_%dwide_top%d", c.n, c.H, c.k), func(t *testing.T) {
			x0, yr, ys := randNonZero(r, c.n*c.H), randNonZero(r, c.n*c.k*c.H), randNonZero(r, c.n*c.H)
			wts, dense, nw := randNonZero(r, c.n*c.k), randNonZero(r, c.n*c.stride), randNonZero(r, c.H)
			refX, refN := combineNormRef(x0, yr, wts, ys, dense, nw, c.n, c.H, c.k, c.stride, c.sgcol, c.pitch)
			gx, gn := combine(t, c, true, x0, yr, wts, ys, dense, nw)
			ox, on := combine(t, c, false, x0, yr, wts, ys, dense, nw)
			checkClose(t, "cluster x against the CPU", gx, refX, 1e-6)
			checkClose(t, "cluster normed against the CPU", gn, refN, 1e-6)
			checkClose(t, "cluster x against the one-block kernel", gx, ox, 1e-6)
			checkClose(t, "cluster normed against the one-block kernel", gn, on, 1e-6)
			differ, maxULP := ULPDiff(gn, on)
			t.Logf("cluster against one-block: %d/%d normed values differ, max %d ULP", differ, len(on), maxULP)
		})
	}

	t.Run("switch", func(t *testing.T) {
		const n, H = 4, 2048
		x0, y, w := randNonZero(r, n*H), randNonZero(r, n*H), randNonZero(r, H)
		c := addCase{n, H, H, false}
		want, wantN := addNorm(t, c, true, x0, y, w)
		xb, yb, nb, wb := upload(t, x0), upload(t, y), poisoned(t, n*H), upload(t, w)
		normCluster = true
		if err := dev.Run(func(q *Queue) error {
			for _, m := range []int{1, 2, 4, 8} {
				if !q.normClusterRows(m) {
					return fmt.Errorf("switch on, fast, sm_%d%d: %d rows not sent to the cluster kernels", dev.Info.Major, dev.Info.Minor, m)
				}
			}
			if q.normClusterRows(normClusterMaxRows + 1) {
				return fmt.Errorf("%d rows sent to the cluster kernels", normClusterMaxRows+1)
			}
			return q.AddRMSNormZC(xb, yb, nb, wb, n, H, H, 1e-6)
		}); err != nil {
			t.Fatal(err)
		}
		if d, _ := ULPDiff(download(t, xb, n*H), want); d != 0 {
			t.Fatalf("x through the switch: %d values differ from the cluster kernel's", d)
		}
		if d, _ := ULPDiff(download(t, nb, n*H), wantN); d != 0 {
			t.Fatalf("normed through the switch: %d values differ from the cluster kernel's", d)
		}
		dev.Numerics = drama3.NumericsExact
		if err := dev.Run(func(q *Queue) error {
			if q.normClusterRows(1) {
				return fmt.Errorf("exact numerics sent to the cluster kernels")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		dev.Numerics = drama3.NumericsFast
	})
}

// TestNormClusterExistingTests runs the existing combine and add-norm tests
// (both policies) with the switch on: exact keeps the CPU's bits (its kernels
// untouched), fast its tolerance through whichever kernel the Queue picks.
func TestNormClusterExistingTests(t *testing.T) {
	prev := normCluster
	normCluster = true
	defer func() { normCluster = prev }()
	t.Run("combine", func(t *testing.T) { eachNumerics(t, testMoECombineNorm) })
	t.Run("addnorm", func(t *testing.T) { eachNumerics(t, testBackboneRowsAndAddNorm) })
}

// TestNormClusterTiming times the two tails alone: 40 layers' add-norm and
// combine-norm (80 dependent launches, Drama 3's width and top 8) captured
// in one graph under PDL and replayed, the one-block kernels against the
// cluster kernels, for B = 1, 2, 4, 8 rows; it prints µs a launch.
func TestNormClusterTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	if dev.Info.Major < 9 {
		t.Skip("thread block clusters need sm_90")
	}
	prevN, prevS := dev.Numerics, normCluster
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics, normCluster = prevN, prevS }()
	const H, k, stride, layers, reps, maxRows = 2048, 8, 1281, 40, 20, 8
	r := newRand(t)
	x, y := upload(t, randNonZero(r, maxRows*H)), upload(t, randNonZero(r, maxRows*H))
	normed, w := alloc(t, maxRows*H*4), upload(t, randNonZero(r, H))
	yr, ys := upload(t, randNonZero(r, maxRows*k*H)), upload(t, randNonZero(r, maxRows*H))
	wts, dense := upload(t, randNonZero(r, maxRows*k)), upload(t, randNonZero(r, maxRows*stride))
	for _, n := range []int{1, 2, 4, 8} {
		var us [2]float64
		for i, on := range []bool{false, true} {
			normCluster = on
			tails := func(q *Queue) error {
				for range layers {
					if err := firstErr(q.AddRMSNormZC(x, y, normed, w, n, H, H, 1e-6),
						q.MoECombineNorm(x, yr, wts, ys, dense, n, stride, stride-1, H, k, nil, normed, w, H, 1e-6)); err != nil {
						return err
					}
				}
				return nil
			}
			var graph *Graph
			if err := dev.Run(func(q *Queue) (err error) { graph, err = q.Capture(tails); return }); err != nil {
				t.Fatal(err)
			}
			if err := dev.Run(func(q *Queue) error { return q.LaunchGraph(graph) }); err != nil { // warm-up
				t.Fatal(err)
			}
			ms, err := dev.Time(func(q *Queue) error {
				for range reps {
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
			us[i] = 1000 * ms / reps / (2 * layers)
		}
		fmt.Printf("norm34 timing B = %d  one-block %6.2f µs  cluster %6.2f µs a launch (add-norm and combine-norm alternating, 80 in a graph; ×%.2f)\n",
			n, us[0], us[1], us[0]/us[1])
	}
}

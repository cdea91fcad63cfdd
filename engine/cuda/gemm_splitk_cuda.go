//go:build cuda

package cuda

import (
	"fmt"
	"sync"

	"proscenium/engine/cuda/kernel"
)

// The split-K workspace (dsplit34; kernels/gemm.cu GEMM_MMA_SPLITK,
// gemm_mma_splitk_sum). Each block of a split GEMM stores its float32
// partial tile there and counts itself in on its tile's counter; the
// tile's last block sums the Z partials in z order into Y and sets the
// counter back to 0. So the bits are the same every run for any count,
// and Y needs no zeroing (dense33's red.global.add summed in arrival order
// into a Y the launch zeroed by a memset node). One workspace of
// GemmSplitBytes serves every split GEMM on the device's stream, one after
// another (stream order, or the next kernel's griddepcontrol.wait under
// PDL, keeps two launches from sharing it at once); the counters are zero
// when it is lent and after every launch that completes.
//
// The workspace is memory of a backbone's plan (BackbonePlan.GemmSplit),
// lent to the device while the backbone is open, so the load's accounting
// (ModelBytes) counts it and Close frees it; a captured graph keeps the
// address it was captured with, which stays valid while that backbone
// (whose graphs they are) lives. A launch uses the newest workspace lent;
// with none, a GEMM the rule would split runs unsplit, and a split
// instance named outright (Gemm.Kernel, the tests) is refused.
type gemmSplitWork = lentList[Tensor]

// lentList is what the device's kernels have been lent (a backbone's
// workspaces), newest last: a launch uses the newest.
type lentList[T comparable] struct {
	mu    sync.Mutex
	items []T
}

func (l *lentList[T]) lend(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, v)
}

// giveBack removes the newest item that is v.
func (l *lentList[T]) giveBack(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.items) - 1; i >= 0; i-- {
		if l.items[i] == v {
			l.items = append(l.items[:i], l.items[i+1:]...)
			return
		}
	}
}

func (l *lentList[T]) newest() (v T, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.items); n > 0 {
		return l.items[n-1], true
	}
	return v, false
}

// lendGemmSplit lends t (GemmSplitBytes, counters zero) to the device's
// split GEMMs until returnGemmSplit(t).
func (d *Device) lendGemmSplit(t Tensor) { d.split.lend(t) }

// returnGemmSplit takes back the workspace t lent.
func (d *Device) returnGemmSplit(t Tensor) { d.split.giveBack(t) }

// gemmSplitWorkspace is the newest workspace lent (false: none).
func (d *Device) gemmSplitWorkspace() (Tensor, bool) { return d.split.newest() }

// gemmSplitArgs are the workspace pointers (part, tiles) of a launch of
// instance suffix on grid, which instance() gave for g: for a split
// instance the device's workspace; without one, a split the rule chose
// falls back to ChooseGemmFast's unsplit pick (suffix and grid replaced),
// one g.Kernel named is an error. Other instances pass through.
func (q *Queue) gemmSplitArgs(g Gemm, suffix *string, grid *[3]int) (part, tiles kernel.Ptr, err error) {
	x := gemmMmaInstances[*suffix]
	if x.splits == 0 {
		return 0, 0, nil
	}
	w, ok := q.d.gemmSplitWorkspace()
	if !ok {
		if g.Kernel != "" || gemmDefault != "" {
			return 0, 0, fmt.Errorf("cuda: gemm: split-K instance %s without a split-K workspace (a backbone lends one)", *suffix)
		}
		*suffix = ChooseGemmFast(g.N, g.Rows, g.Groups)
		*grid = g.mmaGrid(gemmMmaInstances[*suffix])
		return 0, 0, nil
	}
	if blocks := grid[0] * grid[1] * grid[2]; blocks > gemmSplitTiles {
		return 0, 0, fmt.Errorf("cuda: gemm: %s on %d × %d X by W tiles is %d partial tiles, past the workspace's %d",
			*suffix, grid[0], grid[1], blocks, gemmSplitTiles)
	}
	if err := w.fits(GemmSplitBytes, "split-K workspace"); err != nil {
		return 0, 0, err
	}
	return tPtr(w.At(gemmSplitCounterBytes)), tPtr(w), nil
}

//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/cuda/kernel"
)

// gemmXPartsWork is the scratch lent to the dense GEMMs for X's parts
// (xp15). A backbone lends its XRep region (BackbonePlan.XRep, sized to
// hold the parts of a pass's widest dense input): the parts are written by
// gemm_xp_prep and read by the launch right after it on the device's one
// stream, and every other user of XRep (the grouped experts' parts, the
// per-pair path's replicated rows) writes it before its own reads within
// one MoE block, with no dense GEMM between. A launch uses the newest
// scratch lent; with none, or one too small, the q tiles split x in their
// loop as before.
//
// held says which X the newest scratch holds the parts of, when a launch
// wrote them (gemm_xp_prep, or a norm tail's *_xp_fast instance) and no
// launch since: a dense GEMM on that X (the same address, rows, columns and
// pitch) takes them without a prep of its own. Every launch through a Queue
// forgets it (Queue.Launch, sharedLauncher, Queue.LaunchGraph), since any
// kernel may write the scratch or the X; only the x-parts GEMMs, which
// write neither, launch without forgetting (xpartsLauncher). All of it is
// enqueue-time bookkeeping on the device's one thread.
type gemmXPartsWork struct {
	lent lentList[lentScratch]
	held xpartsOf // the device thread's alone: no lock
}

// xpartsOf names an X whose parts the scratch holds: its first float's
// address, rows, columns and pitch (zero: none).
type xpartsOf struct {
	x                uintptr
	rows, cols, step int
}

func (d *Device) forgetXParts()         { d.xparts.held = xpartsOf{} }
func (d *Device) holdXParts(x xpartsOf) { d.xparts.held = x }
func (d *Device) xpartsHeld() xpartsOf  { return d.xparts.held }

// Launch enqueues kernel name (kernel.Launcher) after forgetting what the
// X-parts scratch holds.
func (q *Queue) Launch(name string, grid [3]int, block int, args ...uint64) error {
	q.d.forgetXParts()
	return q.Queue.Launch(name, grid, block, args...)
}

// LaunchGraph launches captured graph g after forgetting what the X-parts
// scratch holds.
func (q *Queue) LaunchGraph(g *Graph) error {
	q.d.forgetXParts()
	return q.Queue.LaunchGraph(g)
}

// xpartsLauncher launches the x-parts GEMMs (dynamic shared memory
// GemmMmaSmemB2) keeping what the scratch holds: they write neither it nor
// their X.
type xpartsLauncher struct{ q *Queue }

func (l xpartsLauncher) Launch(name string, grid [3]int, block int, args ...uint64) error {
	return l.q.Queue.LaunchShared(name, grid, block, kernel.GemmMmaSmemB2, args...)
}

// withXParts runs launch, the fast variant of a kernel that makes a
// prefill pass's dense GEMM input (rows × cols at x, pitch step, cols a
// multiple of 8) and then writes its X parts into the scratch (xp15), and
// records that the scratch holds them. ok false (nothing run): no scratch
// lent or too small, exact numerics, the switch off, a step's rows (≤
// MaxStepRows), or cols not whole 8-column pieces; the caller runs its
// kernel as before.
func (q *Queue) withXParts(x uintptr, rows, cols, step int,
	launch func(xp kernel.Ptr, pstride int64, kpad int) error) (ok bool, err error) {
	if gemmXParts == "off" || GemmXPartsSetting(gemmXParts) != nil || q.d.Numerics.Exact() || rows <= MaxStepRows || cols%8 != 0 {
		return false, nil
	}
	s, lent := q.d.gemmXPartsScratch()
	if !lent || s.bytes < GemmXPartsBytes(rows, cols) {
		return false, nil
	}
	kpad := GemmXPartsKpad(cols)
	if err := launch(tPtr(s.t), int64(rows)*int64(kpad), kpad); err != nil {
		return true, err
	}
	q.d.holdXParts(xpartsOf{x, rows, cols, step})
	return true, nil
}

type lentScratch struct {
	t     Tensor
	bytes int64
}

// lendGemmXParts lends bytes of t to the dense GEMMs' X parts until
// returnGemmXParts(t, bytes).
func (d *Device) lendGemmXParts(t Tensor, bytes int64) { d.xparts.lent.lend(lentScratch{t, bytes}) }

// returnGemmXParts takes back the scratch lent as t, bytes.
func (d *Device) returnGemmXParts(t Tensor, bytes int64) {
	d.xparts.lent.giveBack(lentScratch{t, bytes})
}

func (d *Device) gemmXPartsScratch() (lentScratch, bool) { return d.xparts.lent.newest() }

// gemmXPartsFor is the X-parts entry point and scratch of a fast dense
// launch of instance suffix that the rule chose (ok false: run suffix as it
// is): xp15 on, an X-parts twin compiled, no gathered rows, and scratch
// lent with room for the parts.
func (q *Queue) gemmXPartsFor(g Gemm, suffix string) (k string, split bool, scratch Tensor, ok bool, err error) {
	if err := GemmXPartsSetting(gemmXParts); err != nil {
		return "", false, Tensor{}, false, err
	}
	if gemmXParts == "off" || q.d.Numerics.Exact() || g.Groups > 0 || g.RowIds.Block != nil || g.Kernel != "" || gemmDefault != "" {
		return "", false, Tensor{}, false, nil
	}
	k, split, ok = gemmXPartsKernel(gemmMmaInstances[suffix])
	if !ok {
		return "", false, Tensor{}, false, nil
	}
	s, lent := q.d.gemmXPartsScratch()
	if !lent || s.bytes < GemmXPartsBytes(g.N, g.Cols) {
		return "", false, Tensor{}, false, nil
	}
	return k, split, s.t, true, nil
}

// GemmBF16XParts runs dense GEMM g (GemmBF16's contract; checked there) by
// X-parts entry point k on grid: gemm_xp_prep writes X's three BF16 parts
// into scratch (GemmXPartsBytes), then k multiplies them; a split-K entry
// takes the workspace's part and tiles.
func (q *Queue) GemmBF16XParts(k string, split bool, grid [3]int, g Gemm, y, W, x, scratch Tensor, part, tiles kernel.Ptr) error {
	kpad, pstride, err := q.gemmXPartsPrep(g, x, scratch)
	if err != nil {
		return err
	}
	return q.gemmXPartsRun(k, split, grid, g, g.Rows, y, W, scratch, kpad, pstride, part, tiles)
}

// gemmBF16XPartsTail runs dense GEMM g on the 128 × 64 tile with
// gemmXPartsTail's split: W rows 0 … rows1 − 1 on the tile, the rest on the
// split-K tile in z splits (the device's workspace), after one prep.
func (q *Queue) gemmBF16XPartsTail(g Gemm, rows1, z int, y, W, x, scratch Tensor) error {
	ws, ok := q.d.gemmSplitWorkspace()
	if !ok {
		return fmt.Errorf("cuda: x-parts gemm: a tail split without a split-K workspace")
	}
	kpad, pstride, err := q.gemmXPartsPrep(g, x, scratch)
	if err != nil {
		return err
	}
	nt := (g.N + 63) / 64
	if err := q.gemmXPartsRun(string(kernel.GemmXpBF16M128n64q), false, [3]int{nt, rows1 / 128, 1}, g, rows1, y, W, scratch,
		kpad, pstride, 0, 0); err != nil {
		return err
	}
	rest := g.Rows - rows1
	return q.gemmXPartsRun("gemm_xp_bf16_m128n64qz", true, [3]int{nt, (rest + 127) / 128, z}, g, rest, y.At(int64(rows1)*4),
		W.At(int64(rows1)*int64(g.Cols)*2), scratch, kpad, pstride, tPtr(ws.At(gemmSplitCounterBytes)), tPtr(ws))
}

// gemmXPartsPrep checks g's scratch and writes X's parts into it.
func (q *Queue) gemmXPartsPrep(g Gemm, x, scratch Tensor) (kpad int, pstride int64, err error) {
	if g.Groups > 0 || g.RowIds.Block != nil {
		return 0, 0, fmt.Errorf("cuda: x-parts gemm: dense rows only")
	}
	if err := scratch.fits(GemmXPartsBytes(g.N, g.Cols), "x-parts gemm scratch"); err != nil {
		return 0, 0, err
	}
	if scratch.addr()%16 != 0 {
		return 0, 0, fmt.Errorf("cuda: x-parts gemm: scratch must be 16-byte aligned")
	}
	kpad = GemmXPartsKpad(g.Cols)
	pstride = int64(g.N) * int64(kpad)
	of := xpartsOf{x.addr(), g.N, g.Cols, g.xstride()}
	if s, ok := q.d.gemmXPartsScratch(); ok && s.t == scratch && q.d.xpartsHeld() == of {
		return kpad, pstride, nil // written by the launch before (a norm tail, or this X's last prep)
	}
	pieces := g.N * kpad / 8
	blocks := min((pieces+kernel.GemmXpPrepThreads-1)/kernel.GemmXpPrepThreads, 4*gemmSMs*8)
	if err := kernel.GemmXpPrep(q, [3]int{blocks, 1, 1}, kernel.GemmXpPrepThreads, tPtr(scratch), tPtr(x),
		g.N, g.Cols, g.xstride(), kpad, pstride); err != nil {
		return 0, 0, err
	}
	if s, ok := q.d.gemmXPartsScratch(); ok && s.t == scratch {
		q.d.holdXParts(of)
	}
	return kpad, pstride, nil
}

// gemmXPartsRun launches X-parts entry k on grid for rows W rows of g from
// W and into y (g's Y stride).
func (q *Queue) gemmXPartsRun(k string, split bool, grid [3]int, g Gemm, rows int, y, W, scratch Tensor, kpad int,
	pstride int64, part, tiles kernel.Ptr) error {
	l := xpartsLauncher{q}
	if split {
		return kernel.GemmXpBF16M128n64qz(l, grid, gemmMmaThreads, tPtr(y), tPtr(W), tPtr(scratch), pstride,
			g.N, rows, g.Cols, kpad, g.ystride(), part, tiles)
	}
	return kernel.GemmXpBF16(l, kernel.GemmXpBF16Kernel(k), grid, gemmMmaThreads, tPtr(y), tPtr(W), tPtr(scratch), pstride,
		g.N, rows, g.Cols, kpad, g.ystride())
}

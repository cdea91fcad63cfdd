//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// TestAttentionFlash runs the flash prompt attention (attentionFlash:
// attn_prep, attn_flash_fast and, split, attn_flash_combine_fast) under fast
// numerics on passes of 1, 63, 64, 300 and 512 rows after a 100-row prefix
// already cached (a second pass, a cached voice), on the full and the odd
// geometry, and requires the CPU's attentionCore within fast's 1e-5 for the
// whole output, 1e-4 for each (row, head) vector, with every output written
// (it is NaN first), and the cache's keys within 1e-5 and values bit for
// bit. Each pass runs at the splits the backbone would take, at one split
// (the direct path) and at the most the scratch holds (the combine), so
// both paths meet every length. A wrong causal limit (a row seeing the next
// row's key), a key tile staged from the wrong KV head or a split's range
// off by one moves whole vectors past 1e-4. Every call runs through both
// kernels, attn_flash_fast, attn13's attn_flash2_fast and mma17's
// attn_flash_mma_fast_hd* (each at its own splits as the backbone would take
// them, one and the most; the odd geometry's head dim 24 in the HD 32
// instance, its columns past 24 zeros).
func TestAttentionFlash(t *testing.T) {
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics = prev }()
	r := newRand(t)
	for _, tc := range mixerShapes {
		t.Run(tc.name, func(t *testing.T) {
			const maxRows, capacity = 512, 1100
			c := newAttentionCase(t, r, tc.g, maxRows, capacity, true)
			g, l := tc.g, &c.layer
			l.CoreRows = 64 // as the backbone's: the flash regions lie over the core blocks'
			pw, aw := l.G.ProjWidth(), g.Heads*g.HeadDim
			attnOff := l.Scratch.Off + l.G.scratchLayoutBlocks(maxRows, l.CoreRows, capacity).attn
			var ref cpu.AttentionRef
			for i, n := range []int{100, 1, 63, 64, 300, 512} {
				before := ref.Rows()
				proj := randNonZero(r, n*pw)
				if err := Upload(dev, l.Scratch.Block, l.Scratch.Off, proj); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, n*aw)
				cpu.AttentionCoreRef(want, proj, n, c.ref.QNorm, c.ref.KNorm, c.gref, &ref)
				for _, core := range []flashCore{coreFlash, coreFlash2, coreFlashMMA, coreFlashMMAK32} {
					auto := l.G.coreSplits(core, n, before+n)
					splits := []int{auto, 1, mostFlashSplits(l, n)}
					slices.Sort(splits)
					for _, s := range slices.Compact(splits) {
						if err := Upload(dev, l.Scratch.Block, attnOff, nanRows(n*aw)); err != nil {
							t.Fatal(err)
						}
						if err := dev.Run(func(q *Queue) error { return q.attentionFlashKernel(l, n, Whole(c.pos), before+n, s, core) }); err != nil {
							t.Fatal(err)
						}
						if err := dev.Sync(); err != nil {
							t.Fatal(err)
						}
						got := make([]float32, n*aw)
						if err := Download(dev, got, l.Scratch.Block, attnOff); err != nil {
							t.Fatal(err)
						}
						what := fmt.Sprintf("%s call %d (%d rows after %d, %d splits; the backbone's %d)", core, i, n, before, s, auto)
						checkClose(t, what, got, want, 1e-5)
						checkVectorsClose(t, what, got, want, g.HeadDim, 1e-4)
					}
				}
				if err := dev.Run(func(q *Queue) error { return q.AddInt32(Whole(c.pos), n) }); err != nil {
					t.Fatal(err)
				}
			}
			rows := ref.Rows()
			kv := download(t, l.KV.Block, int(l.G.KVBytes(capacity)/4))
			w := g.KVHeads * g.HeadDim
			checkClose(t, "cached keys", kv[:rows*w], ref.Keys(), 1e-5)
			checkCPUBits(t, "cached values", kv[capacity*w:capacity*w+rows*w], ref.Values())
		})
	}
}

// TestAttentionFlashRefusesExact: the flash core computes under fast only;
// under exact it refuses, and AttentionForward keeps the core blocks (which
// TestAttentionCoreBits holds to the CPU's bits).
func TestAttentionFlashRefusesExact(t *testing.T) {
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsExact
	defer func() { dev.Numerics = prev }()
	c := newAttentionCase(t, newRand(t), oddGeometry, 8, 16, true)
	err := dev.Run(func(q *Queue) error {
		if q.flashApplies(&c.layer, 8, nil) {
			t.Error("the flash core applies under exact numerics")
		}
		return q.attentionFlash(&c.layer, 8, Whole(c.pos), 8)
	})
	if err == nil {
		t.Fatal("attentionFlash ran under exact numerics")
	}
	t.Logf("refused: %v", err)
}

// mostFlashSplits is the most splits (≤ flashMaxSplits) whose partials of n
// rows the layer's scratch holds.
func mostFlashSplits(l *AttentionLayer, n int) int {
	room := l.G.flashPartFloats(l.MaxRows, l.Capacity)
	s := flashMaxSplits
	for s > 1 && int64(n*l.G.Heads*s)*int64(flashPartHead+l.G.HeadDim) > room {
		s--
	}
	return s
}

// nanRows is n NaNs (an output region poisoned before a call).
func nanRows(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.NaN())
	}
	return v
}

// checkVectorsClose fails unless every width-long vector of got is within
// tol of ref's (relative, ‖got − ref‖/‖ref‖): a few wrong rows or heads
// that the whole output's error would average away.
func checkVectorsClose(t *testing.T, what string, got, ref []float32, width int, tol float64) {
	t.Helper()
	worst, at := 0.0, 0
	for v := 0; v < len(ref)/width; v++ {
		var num, den float64
		for i := v * width; i < (v+1)*width; i++ {
			d := float64(got[i]) - float64(ref[i])
			num += d * d
			den += float64(ref[i]) * float64(ref[i])
		}
		if e := math.Sqrt(num / den); !(e <= worst) {
			worst, at = e, v
		}
	}
	t.Logf("%s: worst vector %d of %d at %.3g", what, at, len(ref)/width, worst)
	if !(worst <= tol) {
		t.Fatalf("%s: vector %d of %d off by %.3g > %.3g", what, at, len(ref)/width, worst, tol)
	}
}

// TestAttentionFlashTiming prints the device time of a prefill pass's
// attention core at the full geometry under fast numerics, the flash core
// (attentionFlash) against the 64-row core blocks it replaces
// (attentionBlocks), each with its attn_prep: passes of 60, 300 and 512
// rows from an empty cache, 188 rows after 512 (a 700-row prompt's second
// pass) and 60 after 700 (a script after a cached voice). The mean of reps
// calls after a warm-up; nothing is asserted (docs/PERF.md). attn13 adds
// attn_flash2_fast (a "timing flash2" line: at its own splits, against
// attn_flash_fast in the same process) at 60, 300, 512, 700 and 1024 rows
// from empty and 60 and 300 rows after a 700-row prefix; mma17 adds the
// tensor-core kernel beside them ("timing flash-mma").
func TestAttentionFlashTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics = prev }()
	r := newRand(t)
	const maxRows, coreRows, capacity, reps = 1024, 64, 1100, 20
	c := newAttentionCase(t, r, fullGeometry, maxRows, capacity, true)
	l := &c.layer
	l.CoreRows = coreRows
	g := l.G
	if err := Upload(dev, l.KV.Block, l.KV.Off, scaled(r, int(g.KVBytes(capacity)/4), 1)); err != nil {
		t.Fatal(err)
	}
	if err := Upload(dev, l.Scratch.Block, l.Scratch.Off, randNonZero(r, maxRows*g.ProjWidth())); err != nil {
		t.Fatal(err)
	}
	blockPos := alloc(t, 4*(maxRows/coreRows))
	timeIt := func(f func(q *Queue) error) float64 {
		t.Helper()
		if err := dev.Run(f); err != nil {
			t.Fatal(err)
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
			t.Fatal(err)
		}
		return 1000 * ms / reps
	}
	for _, p := range []struct{ before, n int }{{0, 60}, {0, 300}, {0, 512}, {512, 188}, {700, 60}} {
		var at []int32
		for s := 0; s < p.n; s += coreRows {
			at = append(at, int32(p.before+s))
		}
		if err := firstErr(Upload(dev, c.pos, 0, []int32{int32(p.before)}), Upload(dev, blockPos, 0, at)); err != nil {
			t.Fatal(err)
		}
		maxLen := p.before + p.n
		flash := timeIt(func(q *Queue) error { return q.attentionFlash(l, p.n, Whole(c.pos), maxLen) })
		blocks := timeIt(func(q *Queue) error { return q.attentionBlocks(l, p.n, Whole(blockPos), maxLen, nil) })
		fmt.Printf("timing attention core, %3d rows after %3d: flash %8.1f µs (%d splits), 64-row blocks %8.1f µs (%d blocks)\n",
			p.n, p.before, flash, g.flashSplits(p.n, maxLen), blocks, len(at))
	}
	// attn13: attn_flash2_fast against attn_flash_fast (each with its
	// attn_prep and, split, its combine), both forced whatever the switch.
	for _, p := range []struct{ before, n int }{{0, 60}, {0, 300}, {0, 512}, {0, 700}, {0, 1024}, {700, 60}, {700, 300}} {
		if err := Upload(dev, c.pos, 0, []int32{int32(p.before)}); err != nil {
			t.Fatal(err)
		}
		maxLen := p.before + p.n
		s1, s2, s3 := g.flashSplits(p.n, maxLen), g.flash2Splits(p.n, maxLen), g.flashMMASplits(p.n, maxLen)
		flash := timeIt(func(q *Queue) error { return q.attentionFlashKernel(l, p.n, Whole(c.pos), maxLen, s1, coreFlash) })
		flash2 := timeIt(func(q *Queue) error { return q.attentionFlashKernel(l, p.n, Whole(c.pos), maxLen, s2, coreFlash2) })
		mma := timeIt(func(q *Queue) error { return q.attentionFlashKernel(l, p.n, Whole(c.pos), maxLen, s3, coreFlashMMA) })
		k32 := timeIt(func(q *Queue) error { return q.attentionFlashKernel(l, p.n, Whole(c.pos), maxLen, s3, coreFlashMMAK32) })
		fmt.Printf("timing flash2, %4d rows after %3d: flash2 %8.1f µs (%2d splits, %3d blocks), flash %8.1f µs (%2d splits): %.2f×\n",
			p.n, p.before, flash2, s2, g.flash2Tiles(p.n)*g.KVHeads*s2, flash, s1, flash/flash2)
		fmt.Printf("timing flash-mma, %4d rows after %3d: flash-mma %8.1f µs, 32-key tiles %8.1f µs (%2d splits, %3d blocks), flash2 %8.1f µs: %.2f×\n",
			p.n, p.before, mma, k32, s3, g.flashMMATiles(p.n)*g.KVHeads*s3, flash2, flash2/mma)
	}
}

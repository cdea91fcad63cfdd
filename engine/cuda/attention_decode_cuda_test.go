//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// The one-launch decode attention (attentionDecode, attn_decode_fast)
// against the CPU and the four kernels it replaces, under fast numerics.

// withFast runs the test under fast numerics (the kernel's only policy).
func withFast(t *testing.T) {
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast
	t.Cleanup(func() { dev.Numerics = prev })
}

// decodeCounters allocates n zero tail counters.
func decodeCountersBlock(t *testing.T, n int) *Block {
	return upload(t, make([]uint32, n))
}

// checkCountersZero fails unless the launch left its counters at zero (the
// next layer's launch counts from there).
func checkCountersZero(t *testing.T, what string, c *Block, n int) {
	t.Helper()
	got := make([]uint32, n)
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := Download(dev, got, c, 0); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 0 {
			t.Fatalf("%s: counter %d left at %d", what, i, v)
		}
	}
}

// checkKVAgainst holds a cache after the new kernel to the cache after the
// old kernels: values bit for bit, keys within 1e-5 over the rows written
// (the new row's key is normed and rotated by other float32 code), and no
// more than that row's keys different anywhere (the rows past it may hold
// anything, the same in both).
func checkKVAgainst(t *testing.T, what string, got, want []float32, capacity, kvw, rows int) {
	t.Helper()
	half := capacity * kvw
	if d, ulp := ULPDiff(got[half:], want[half:]); d != 0 {
		t.Fatalf("%s: %d cached values differ from the four kernels' (up to %d ULP)", what, d, ulp)
	}
	if d, _ := ULPDiff(got[:half], want[:half]); d > kvw {
		t.Fatalf("%s: %d cached keys differ from the four kernels' (more than the new row's %d)", what, d, kvw)
	}
	checkClose(t, what+" keys", got[:rows*kvw], want[:rows*kvw], 1e-5)
}

// TestAttentionDecode runs one-row steps through attentionDecode on the full
// and the odd geometry over a cache of 1100 rows — the first row (itself
// only), rows after short prompts, rows after about 1000 cached (every
// split full) and the cache's last row — and requires, for each, the CPU's
// attentionCore within fast's 1e-5 for the output and 1e-4 for every head's
// vector, the four kernels' output within 1e-5, the cache the four kernels
// leave (values bit for bit), and the tail counters left zero. A row at the
// capacity gives NaN and leaves the cache as it was. Each step again with
// the reads ahead of the wait (attn_decode_ahead_fast): the same bits,
// output and cache. The prompts between
// run through attentionCore (the four kernels), so the cache the steps read
// is the CPU's.
func TestAttentionDecode(t *testing.T) {
	withFast(t)
	r := newRand(t)
	for _, tc := range mixerShapes {
		t.Run(tc.name, func(t *testing.T) {
			const maxRows, capacity = 64, 1100
			c := newAttentionCase(t, r, tc.g, maxRows, capacity, true)
			g, l := tc.g, &c.layer
			if !l.decodeFits(1) {
				t.Fatal("the one-launch decode must take the geometry")
			}
			pw, aw, kvw := l.G.ProjWidth(), g.Heads*g.HeadDim, g.KVHeads*g.HeadDim
			attnOff := l.Scratch.Off + l.G.scratchLayout(maxRows, capacity).attn
			kvFloats := int(l.G.KVBytes(capacity) / 4)
			counters := decodeCountersBlock(t, l.G.decodeCounters(1))
			var ref cpu.AttentionRef
			// Steps (1) after 0, 1, 7 and 38 rows, after about 1000 and at
			// the cache's last row, prompts (more) between.
			calls := []int{1, 1, 5, 1, 30, 1}
			rows := 39
			for ; rows+64 <= 1000; rows += 64 {
				calls = append(calls, 64)
			}
			calls = append(calls, 1, 1)
			for rows += 2; rows < capacity-1; rows += min(64, capacity-1-rows) {
				calls = append(calls, min(64, capacity-1-rows))
			}
			calls = append(calls, 1)
			attn := func() []float32 {
				got := make([]float32, aw)
				if err := dev.Sync(); err != nil {
					t.Fatal(err)
				}
				if err := Download(dev, got, l.Scratch.Block, attnOff); err != nil {
					t.Fatal(err)
				}
				return got
			}
			for i, n := range calls {
				before := ref.Rows()
				proj := randNonZero(r, n*pw)
				if err := Upload(dev, l.Scratch.Block, l.Scratch.Off, proj); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, n*aw)
				cpu.AttentionCoreRef(want, proj, n, c.ref.QNorm, c.ref.KNorm, c.gref, &ref)
				if n > 1 {
					if err := dev.Run(func(q *Queue) error {
						return firstErr(q.attentionCore(l, n, Whole(c.pos), before+n), q.AddInt32(Whole(c.pos), n))
					}); err != nil {
						t.Fatal(err)
					}
					continue
				}
				kv := download(t, l.KV.Block, kvFloats)
				if err := dev.Run(func(q *Queue) error { return q.attentionCore(l, 1, Whole(c.pos), 0) }); err != nil {
					t.Fatal(err)
				}
				old, oldKV := attn(), download(t, l.KV.Block, kvFloats)
				if err := firstErr(Upload(dev, l.KV.Block, l.KV.Off, kv), Upload(dev, l.Scratch.Block, attnOff, nanRows(aw))); err != nil {
					t.Fatal(err)
				}
				if err := dev.Run(func(q *Queue) error { return q.attentionDecode(l, 1, Whole(c.pos), nil, counters, false) }); err != nil {
					t.Fatal(err)
				}
				got := attn()
				what := fmt.Sprintf("call %d (a step after %d rows, %d of %d splits)", i, before, min(decodeSplits(capacity), (before+32)/32), decodeSplits(capacity))
				checkClose(t, what, got, want, 1e-5)
				checkVectorsClose(t, what, got, want, g.HeadDim, 1e-4)
				checkClose(t, what+" against the four kernels", got, old, 1e-5)
				gotKV := download(t, l.KV.Block, kvFloats)
				checkKVAgainst(t, what+" cache", gotKV, oldKV, capacity, kvw, before+1)
				checkCountersZero(t, what, counters, l.G.decodeCounters(1))
				// The same launch with its reads ahead of the wait
				// (attn_decode_ahead_fast): the same bits.
				if err := firstErr(Upload(dev, l.KV.Block, l.KV.Off, kv), Upload(dev, l.Scratch.Block, attnOff, nanRows(aw))); err != nil {
					t.Fatal(err)
				}
				if err := dev.Run(func(q *Queue) error { return q.attentionDecode(l, 1, Whole(c.pos), nil, counters, true) }); err != nil {
					t.Fatal(err)
				}
				if d, ulp := ULPDiff(attn(), got); d != 0 {
					t.Fatalf("%s: %d outputs differ with the reads ahead (up to %d ULP)", what, d, ulp)
				}
				if d, ulp := ULPDiff(download(t, l.KV.Block, kvFloats), gotKV); d != 0 {
					t.Fatalf("%s: %d cached values differ with the reads ahead (up to %d ULP)", what, d, ulp)
				}
				checkCountersZero(t, what+" ahead", counters, l.G.decodeCounters(1))
				if err := dev.Run(func(q *Queue) error { return q.AddInt32(Whole(c.pos), 1) }); err != nil {
					t.Fatal(err)
				}
			}
			if ref.Rows() != capacity {
				t.Fatalf("the calls filled %d rows, not the capacity %d", ref.Rows(), capacity)
			}
			// At the capacity: NaN, nothing cached, the counters untouched.
			kv := download(t, l.KV.Block, kvFloats)
			if err := firstErr(Upload(dev, l.Scratch.Block, l.Scratch.Off, randNonZero(r, pw)), Upload(dev, l.Scratch.Block, attnOff, make([]float32, aw))); err != nil {
				t.Fatal(err)
			}
			for _, ahead := range []bool{false, true} {
				if err := Upload(dev, l.Scratch.Block, attnOff, make([]float32, aw)); err != nil {
					t.Fatal(err)
				}
				if err := dev.Run(func(q *Queue) error { return q.attentionDecode(l, 1, Whole(c.pos), nil, counters, ahead) }); err != nil {
					t.Fatal(err)
				}
				for i, v := range attn() {
					if !math.IsNaN(float64(v)) {
						t.Fatalf("a row at the capacity (reads ahead %v): output %d is %v, not NaN", ahead, i, v)
					}
				}
				if d, _ := ULPDiff(download(t, l.KV.Block, kvFloats), kv); d != 0 {
					t.Fatalf("a row at the capacity (reads ahead %v) changed %d cached values", ahead, d)
				}
				checkCountersZero(t, "at the capacity", counters, l.G.decodeCounters(1))
			}
		})
	}
}

// TestAttentionDecodeRows runs the B-row step's core (attentionCoreRows)
// through attentionDecode and through the four *_slots kernels on the same
// takes' caches (random, as a take's mid-way) and rows, and requires the
// same outputs within fast's 1e-5 (1e-4 for every head's vector) and the
// same caches (values bit for bit): three takes on a 40-row cache (one at
// its last row, one at its first), and eight on a 1100-row cache from 3 to
// 1099 rows cached with one at the capacity (NaN, nothing cached), its rows
// in another order than their slots; and the reads ahead of the wait
// (attn_decode_ahead_fast) the same bits. The one-row kernels the *_slots ones
// run are held to the CPU by TestAttentionLayer and TestAttentionStepRows.
func TestAttentionDecodeRows(t *testing.T) {
	withFast(t)
	r := newRand(t)
	for _, tc := range mixerShapes {
		for _, cs := range []struct {
			capacity  int
			slots     []int32
			positions []int32 // by slot
		}{
			{40, []int32{2, 0, 1}, []int32{17, 0, 39}},
			{1100, []int32{5, 7, 0, 2, 1, 6, 3, 4}, []int32{1000, 3, 1099, 40, 640, 1100, 128, 7}},
		} {
			t.Run(fmt.Sprintf("%s/%d takes, capacity %d", tc.name, len(cs.slots), cs.capacity), func(t *testing.T) {
				n := len(cs.slots)
				c := newAttentionCase(t, r, tc.g, 8, cs.capacity, true)
				l := c.layer
				ag, g := l.G, tc.g
				kvb := int(ag.KVBytes(cs.capacity))
				caches := randomState(t, r, n*kvb/4)
				aw := g.Heads * g.HeadDim
				attnOff := l.Scratch.Off + ag.scratchLayout(l.MaxRows, cs.capacity).attn
				proj := randNonZero(r, n*ag.ProjWidth())
				counters := decodeCountersBlock(t, ag.decodeCounters(n))
				run := func(dec *Block, ahead bool) (out, kv []float32) {
					all, pos := upload(t, caches), upload(t, cs.positions)
					l.KV = Whole(all)
					sl := stepSlots{slots: Whole(upload(t, cs.slots)), stride: int64(kvb / 4), pos: Whole(pos)}
					if err := firstErr(Upload(dev, l.Scratch.Block, l.Scratch.Off, proj), Upload(dev, l.Scratch.Block, attnOff, nanRows(n*aw))); err != nil {
						t.Fatal(err)
					}
					if dec != nil && !dev.Numerics.Exact() && !attnDecode {
						attnDecode = true // attentionCoreRows asks decodeApplies
						defer func() { attnDecode = false }()
					}
					if err := dev.Run(func(q *Queue) error { return q.attentionCoreRows(&l, n, sl, dec, ahead) }); err != nil {
						t.Fatal(err)
					}
					out = make([]float32, n*aw)
					if err := dev.Sync(); err != nil {
						t.Fatal(err)
					}
					if err := Download(dev, out, l.Scratch.Block, attnOff); err != nil {
						t.Fatal(err)
					}
					return out, download(t, all, n*kvb/4)
				}
				old, oldKV := run(nil, false)
				got, gotKV := run(counters, false)
				checkCountersZero(t, "rows", counters, ag.decodeCounters(n))
				// With its reads ahead of the wait (attn_decode_ahead_fast): the same bits.
				aheadOut, aheadKV := run(counters, true)
				checkCountersZero(t, "rows ahead", counters, ag.decodeCounters(n))
				if d, ulp := ULPDiff(aheadOut, got); d != 0 {
					t.Fatalf("%d outputs differ with the reads ahead (up to %d ULP)", d, ulp)
				}
				if d, ulp := ULPDiff(aheadKV, gotKV); d != 0 {
					t.Fatalf("%d cached values differ with the reads ahead (up to %d ULP)", d, ulp)
				}
				for row, s := range cs.slots {
					what := fmt.Sprintf("row %d (slot %d after %d rows)", row, s, cs.positions[s])
					o, w := got[row*aw:(row+1)*aw], old[row*aw:(row+1)*aw]
					if int(cs.positions[s]) >= cs.capacity {
						for i := range o {
							if !math.IsNaN(float64(o[i])) || !math.IsNaN(float64(w[i])) {
								t.Fatalf("%s: output %d is %v (the four kernels' %v), not NaN", what, i, o[i], w[i])
							}
						}
					} else {
						checkClose(t, what, o, w, 1e-5)
						checkVectorsClose(t, what, o, w, g.HeadDim, 1e-4)
					}
					k := int(s) * kvb / 4
					checkKVAgainst(t, fmt.Sprintf("slot %d cache", s), gotKV[k:k+kvb/4], oldKV[k:k+kvb/4], cs.capacity, g.KVHeads*g.HeadDim, cs.capacity)
				}
			})
		}
	}
}

// TestAttentionDecodeRefusesExact: the one-launch decode computes under
// fast only; under exact it refuses, and decodeApplies keeps the four
// kernels (the CPU's bits, TestAttentionCoreBits).
func TestAttentionDecodeRefusesExact(t *testing.T) {
	prev, prevOn := dev.Numerics, attnDecode
	dev.Numerics, attnDecode = drama3.NumericsExact, true
	defer func() { dev.Numerics, attnDecode = prev, prevOn }()
	c := newAttentionCase(t, newRand(t), oddGeometry, 8, 16, true)
	counters := decodeCountersBlock(t, c.layer.G.decodeCounters(1))
	err := dev.Run(func(q *Queue) error {
		if q.decodeApplies(&c.layer, 1, counters) {
			t.Error("the one-launch decode applies under exact numerics")
		}
		return q.attentionDecode(&c.layer, 1, Whole(c.pos), nil, counters, false)
	})
	if err == nil {
		t.Fatal("attentionDecode ran under exact numerics")
	}
	t.Logf("refused: %v", err)
}

// TestAttentionDecodeTiming prints the device time of a step's attention
// core at the full geometry under fast numerics, attentionDecode against the
// four kernels (attentionCore for one row, the *_slots kernels for B rows),
// each as a captured graph of reps cores replayed (the step's PDL launches)
// over a 2048-row cache: B = 1, 2, 4, 8 rows, every take after 60, 200, 1000
// and 2000 cached rows; and the one launch's grid at 32–256 blocks (B = 1
// and 8, 200 and 1000 rows). Nothing is asserted (docs/PERF.md "attn32").
func TestAttentionDecodeTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	withFast(t)
	r := newRand(t)
	const capacity, reps = 2048, 50
	c := newAttentionCase(t, r, fullGeometry, 8, capacity, true)
	l := c.layer
	g := l.G
	kvb := int(g.KVBytes(capacity))
	all := upload(t, scaled(r, 8*kvb/4, 1))
	l.KV = Whole(all)
	if err := Upload(dev, l.Scratch.Block, l.Scratch.Off, randNonZero(r, 8*g.ProjWidth())); err != nil {
		t.Fatal(err)
	}
	counters := decodeCountersBlock(t, g.decodeCounters(8))
	slots := upload(t, []int32{0, 1, 2, 3, 4, 5, 6, 7})
	timeGraph := func(f func(q *Queue) error) float64 {
		t.Helper()
		var graph *Graph
		if err := dev.Run(func(q *Queue) (err error) {
			graph, err = q.Capture(func(q *Queue) error {
				for i := 0; i < reps; i++ {
					if err := f(q); err != nil {
						return err
					}
				}
				return nil
			})
			return
		}); err != nil {
			t.Fatal(err)
		}
		defer dev.Run(func(q *Queue) error { graph.Destroy(); return nil })
		if err := dev.Run(func(q *Queue) error { return q.LaunchGraph(graph) }); err != nil { // warm-up
			t.Fatal(err)
		}
		ms, err := dev.Time(func(q *Queue) error { return q.LaunchGraph(graph) })
		if err != nil {
			t.Fatal(err)
		}
		return 1000 * ms / reps
	}
	prevOn := attnDecode
	defer func() { attnDecode = prevOn }()
	for _, n := range []int{1, 2, 4, 8} {
		for _, before := range []int32{60, 200, 1000, 2000} {
			pos := make([]int32, 8)
			for i := range pos {
				pos[i] = before
			}
			posB := upload(t, pos)
			sl := stepSlots{slots: Whole(slots), stride: int64(kvb / 4), pos: Whole(posB)}
			var oldF, newF func(q *Queue) error
			if n == 1 {
				oldF = func(q *Queue) error { return q.attentionCore(&l, 1, Whole(posB), 0) }
				newF = func(q *Queue) error { return q.attentionDecode(&l, 1, Whole(posB), nil, counters, false) }
			} else {
				attnDecode = true
				oldF = func(q *Queue) error { return q.attentionCoreRows(&l, n, sl, nil, false) }
				newF = func(q *Queue) error { return q.attentionCoreRows(&l, n, sl, counters, false) }
			}
			old, dec := timeGraph(oldF), timeGraph(newF)
			fmt.Printf("timing decode attention, B = %d, %4d rows cached: four kernels %6.2f µs, one launch %6.2f µs (%.2f×)\n",
				n, before, old, dec, old/dec)
			if (n == 1 || n == 8) && (before == 200 || before == 1000) {
				// The grid's size: blocks the launch aims at (decodeTargetBlocks).
				prevTarget := decodeTargetBlocks
				line := fmt.Sprintf("timing decode grid, B = %d, %4d rows cached:", n, before)
				for _, target := range []int{32, 64, 128, 256} {
					decodeTargetBlocks = target
					line += fmt.Sprintf(" %d blocks (%d splits) %.2f µs;", target, g.decodeGridSplits(n, capacity), timeGraph(newF))
				}
				decodeTargetBlocks = prevTarget
				fmt.Println(line)
			}
		}
	}
}

package cuda

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The expert cache's policy, without a GPU: placement, eviction order,
// hysteresis, the per-frame budget, the write-back buffers, the statistics.

// foldUses folds one frame in which key k was used uses[k] more times.
func foldUses(t *testing.T, c *ExpertCachePolicy, counts []uint32, add map[int]uint32) {
	t.Helper()
	for k, n := range add {
		counts[k] += n
	}
	if err := c.Fold(counts, 0, 0); err != nil {
		t.Fatal(err)
	}
}

// TestExpertCachePlacement: the initial placement is the tier's (first
// layers in their own slots, the stage layer on the stage, the rest in
// host memory), and bad shapes are refused.
func TestExpertCachePlacement(t *testing.T) {
	c, err := NewExpertCachePolicy(DefaultExpertCacheConfig, 4, 8, 2, 3, 64, 100)
	if err != nil {
		t.Fatal(err)
	}
	for k := range 32 {
		want := map[int]int{0: k, 1: k, 2: ExpertOnHost, 3: ExpertOnStage}[k/8]
		if got := c.Where(k); got != want {
			t.Errorf("key %d: where %d, want %d", k, got, want)
		}
	}
	if !c.Intact(0) || !c.Intact(1) || c.Intact(2) {
		t.Errorf("intact layers 0, 1, 2: %v %v %v", c.Intact(0), c.Intact(1), c.Intact(2))
	}
	s := c.Stats()
	if s.Slots != 16 || s.Resident != 24 || s.Total != 32 || s.HitRate() != 1 {
		t.Errorf("stats %+v", s)
	}
	for _, bad := range [][5]int{{0, 8, 0, -1, 0}, {4, 8, 5, -1, 0}, {4, 8, 2, 1, 0}, {4, 8, 2, 4, 0}, {4, 8, 2, 3, -1}} {
		if _, err := NewExpertCachePolicy(DefaultExpertCacheConfig, bad[0], bad[1], bad[2], bad[3], bad[4], 100); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if _, err := NewExpertCachePolicy(ExpertCacheConfig{Decay: 0.9, Margin: 0.5}, 4, 8, 2, 3, 64, 100); err == nil {
		t.Error("a margin below 1 accepted")
	}
	if err := c.Fold(make([]uint32, 31), 0, 0); err == nil {
		t.Error("a fold of the wrong length accepted")
	}
}

// TestExpertCacheEvictsLeastUsed: hot host experts replace the least-used
// residents first, one swap per pair, the hottest host expert taking the
// coldest slot; an evicted expert reads from host memory at once, a
// promoted one only after Done.
func TestExpertCacheEvictsLeastUsed(t *testing.T) {
	c, err := NewExpertCachePolicy(ExpertCacheConfig{Decay: 0.5, Margin: 1.5, MinScore: 1, Budget: 2}, 3, 4, 2, -1, 64, 100)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]uint32, 12)
	// Residents 0…7: all used but 5 (never) and 2 (once); host 8…11: 9 hottest, then 10.
	foldUses(t, c, counts, map[int]uint32{0: 9, 1: 9, 2: 1, 3: 9, 4: 9, 6: 9, 7: 9, 9: 20, 10: 12, 11: 1})
	swaps := c.Plan()
	// Both victims are device-layer experts: written back into backing buffers 0 and 1.
	want := []ExpertSwap{{Slot: 5, Evict: 5, Promote: 9, WriteBack: 0}, {Slot: 2, Evict: 2, Promote: 10, WriteBack: 1}}
	if len(swaps) != len(want) {
		t.Fatalf("swaps %+v, want %+v", swaps, want)
	}
	for i := range want {
		if swaps[i] != want[i] {
			t.Errorf("swap %d: %+v, want %+v", i, swaps[i], want[i])
		}
	}
	if c.Where(5) != ExpertOnHost || c.Where(2) != ExpertOnHost || c.Where(9) != ExpertOnHost {
		t.Errorf("before the copies: 5 at %d, 2 at %d, 9 at %d", c.Where(5), c.Where(2), c.Where(9))
	}
	if c.Intact(0) || c.Intact(1) {
		t.Error("layers with evicted experts still intact")
	}
	c.Done(9)
	c.Done(10)
	c.EvictDone(5)
	c.EvictDone(2)
	if c.Where(9) != 5 || c.Where(10) != 2 || c.Backed(5) != 0 || c.Backed(2) != 1 || c.Backed(9) != -1 {
		t.Errorf("after the copies: 9 at %d, 10 at %d", c.Where(9), c.Where(10))
	}
	s := c.Stats()
	if s.Promotions != 2 || s.Evictions != 2 || s.WriteBacks != 2 || s.PromotedBytes != 200 || s.Resident != 8 {
		t.Errorf("stats %+v", s)
	}
	// Nothing pending is chosen again: 11 is too cold for any resident.
	if more := c.Plan(); len(more) != 0 {
		t.Errorf("a second plan %+v", more)
	}
}

// TestExpertCacheHysteresis: near-uniform routing moves nothing, however
// long it runs; a host expert must pass a resident's score by the margin.
func TestExpertCacheHysteresis(t *testing.T) {
	c, err := NewExpertCachePolicy(DefaultExpertCacheConfig, 4, 16, 2, 3, 64, 100)
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]uint32, 64)
	for f := range 500 {
		add := map[int]uint32{}
		for l := range 4 {
			for j := range 4 { // four of sixteen experts a layer, rotating
				add[l*16+(f*4+j+l)%16]++
			}
		}
		foldUses(t, c, counts, add)
		if swaps := c.Plan(); len(swaps) != 0 {
			t.Fatalf("frame %d: uniform routing moved %+v", f, swaps)
		}
	}
	// A host expert used a little more than a resident is not enough…
	c2, _ := NewExpertCachePolicy(ExpertCacheConfig{Decay: 1, Margin: 1.5, MinScore: 2, Budget: 4}, 2, 2, 1, -1, 64, 1)
	counts = make([]uint32, 4)
	foldUses(t, c2, counts, map[int]uint32{0: 10, 1: 10, 2: 16})
	if swaps := c2.Plan(); len(swaps) != 0 {
		t.Errorf("16 uses against 10 (margin 1.5, min 2: needs > 17): %+v", swaps)
	}
	// …one past the margin is.
	foldUses(t, c2, counts, map[int]uint32{2: 2})
	if swaps := c2.Plan(); len(swaps) != 1 {
		t.Errorf("18 uses against 10: %+v", swaps)
	}
}

// TestExpertCacheBudget: a plan starts at most Budget promotions, however
// many are due; the next plans take the rest; a zero budget moves nothing.
func TestExpertCacheBudget(t *testing.T) {
	c, _ := NewExpertCachePolicy(ExpertCacheConfig{Decay: 1, Margin: 1, MinScore: 0, Budget: 3}, 2, 8, 1, -1, 64, 1)
	counts := make([]uint32, 16)
	add := map[int]uint32{}
	for k := 8; k < 16; k++ {
		add[k] = 5
	}
	foldUses(t, c, counts, add)
	var total int
	for i := range 4 {
		swaps := c.Plan()
		if len(swaps) > 3 {
			t.Fatalf("plan %d: %d swaps over a budget of 3", i, len(swaps))
		}
		for _, s := range swaps {
			c.Done(s.Promote)
		}
		total += len(swaps)
	}
	if total != 8 {
		t.Errorf("%d promotions in all, want the 8 hot host experts", total)
	}
	z, _ := NewExpertCachePolicy(ExpertCacheConfig{Decay: 1, Margin: 1, Budget: 0}, 2, 8, 1, -1, 64, 1)
	foldUses(t, z, make([]uint32, 16), add)
	if swaps := z.Plan(); len(swaps) != 0 {
		t.Errorf("a zero budget moved %+v", swaps)
	}
}

// TestExpertCacheFold: scores decay once a frame and add the frame's uses,
// the device's counts taken modulo 2³²; hits and misses add up.
func TestExpertCacheFold(t *testing.T) {
	c, _ := NewExpertCachePolicy(ExpertCacheConfig{Decay: 0.5, Margin: 1, Budget: 1}, 1, 2, 1, -1, 64, 10)
	c.last[1] = math.MaxUint32 - 1 // the device's count about to wrap
	if err := c.Fold([]uint32{4, 2}, 3, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Fold([]uint32{4, 2}, 5, 3); err != nil {
		t.Fatal(err)
	}
	if c.score[0] != 2 || c.score[1] != 2 {
		t.Errorf("scores %v, want [2 2] (4 then 0 uses; 4 across the wrap then 0)", c.score)
	}
	s := c.Stats()
	if s.Hits != 8 || s.Misses != 4 || s.MissBytes != 40 || s.Frames != 2 || math.Abs(s.HitRate()-2.0/3) > 1e-12 || s.BusBytesPerFrame() != 20 {
		t.Errorf("stats %+v", s)
	}
	if d := s.Since(ExpertCacheStats{Hits: 3, Misses: 1, MissBytes: 10, Frames: 1}); d.Hits != 5 || d.Misses != 3 || d.Frames != 1 || d.BusBytesPerFrame() != 30 {
		t.Errorf("since the first fold %+v", d)
	}
}

// TestExpertParts: an expert's four parts in a pack and in a backing
// buffer, each part 256-byte aligned there, the buffers a stride apart.
func TestExpertParts(t *testing.T) {
	x := ExpertPack{FP8: true, Experts: 4, GateUp: 1024, GateUpS: 1024 + 4*300, Down: 1024 + 4*300 + 4*16, DownS: 1024 + 4*300 + 4*16 + 4*200,
		GateUpMatBytes: 300, DownMatBytes: 200, GateUpScaleCount: 4, DownScaleCount: 2}
	a, n := expertParts(x, 1<<20, 2)
	if n != [4]int64{300, 16, 200, 8} || a != [4]uintptr{1<<20 + 1024 + 600, 1<<20 + 1024 + 1200 + 32, 1<<20 + 1024 + 1264 + 400, 1<<20 + 1024 + 2064 + 16} {
		t.Errorf("parts %v at %v", n, a)
	}
	stride := backingStride(x.ExpertBytes())
	if stride != 1792 {
		t.Errorf("backing stride %d, want 1792 (524 bytes and four alignments of 256, rounded up)", stride)
	}
	b, m := backingParts(x, 4096, 3)
	if m != n || b != [4]uintptr{4096 + 3*1792, 4096 + 3*1792 + 512, 4096 + 3*1792 + 768, 4096 + 3*1792 + 1024} {
		t.Errorf("backing parts %v at %v", m, b)
	}
	if got := ExpertCacheBacking(1000, x.ExpertBytes()); got != ExpertCacheBackingExperts*1792 {
		t.Errorf("backing of 1000 device experts: %d bytes", got)
	}
	bf := x
	bf.FP8 = false
	if _, n := expertParts(bf, 0, 1); n[1] != 0 || n[3] != 0 {
		t.Errorf("BF16 experts with scales: %v", n)
	}
}

// uniformPromotions runs frames of uniform random routing (each of rows
// rows picks topK of experts in every layer) through a policy of Drama 3's
// shape under a 22 GiB cap (20 of 40 layers in slots, one on the stage)
// and returns the promotions it started.
func uniformPromotions(t *testing.T, cfg ExpertCacheConfig, rows, frames int, seed uint64) int64 {
	t.Helper()
	const layers, experts, topK, deviceLayers = 40, 256, 8, 20
	c, err := NewExpertCachePolicy(cfg, layers, experts, deviceLayers, layers-1, 64, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	counts := make([]uint32, layers*experts)
	for range frames {
		for l := range layers {
			for range rows {
				for _, e := range r.Perm(experts)[:topK] {
					counts[l*experts+e]++
				}
			}
		}
		if err := c.Fold(counts, 0, 0); err != nil {
			t.Fatal(err)
		}
		for _, s := range c.Plan() {
			c.Done(s.Promote)
		}
	}
	return c.Stats().Promotions
}

// TestExpertCacheUniformRouting: uniform routing (what random weights
// give), one take or four, moves (almost) nothing over 300 frames under the
// default policy: chance heat does not pass the hysteresis.
func TestExpertCacheUniformRouting(t *testing.T) {
	for _, rows := range []int{1, 4} {
		if n := uniformPromotions(t, DefaultExpertCacheConfig, rows, 300, 1); n > 0 {
			t.Errorf("%d rows: %d promotions under uniform routing", rows, n)
		}
	}
	// Without the spread the four-row chance fluctuations pass for heat.
	cfg := DefaultExpertCacheConfig
	cfg.Spread = 0
	if n := uniformPromotions(t, cfg, 4, 300, 1); n < 100 {
		t.Errorf("no spread: only %d promotions (the test shows nothing)", n)
	}
}

// TestExpertCacheBacking: a device-layer expert is evicted only while a
// backing buffer is free (its slot is written back there, once: evicted
// again later it needs none); with none left the victims are experts with
// a host copy, however cold the others; an expert being evicted is not
// promoted again until its entry has switched (EvictDone).
func TestExpertCacheBacking(t *testing.T) {
	cfg := ExpertCacheConfig{Decay: 1, Margin: 1, Budget: 8}
	c, err := NewExpertCachePolicy(cfg, 2, 4, 1, -1, 1, 1) // slots 0…3 (layer 0), host keys 4…7, one backing buffer
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]uint32, 8)
	foldUses(t, c, counts, map[int]uint32{0: 1, 1: 2, 2: 3, 3: 4, 4: 50, 5: 40})
	swaps := c.Plan()
	// 4 takes slot 0 (coldest, backing 0); 5 finds every other victim without a copy and no buffer left.
	if len(swaps) != 1 || swaps[0] != (ExpertSwap{Slot: 0, Evict: 0, Promote: 4, WriteBack: 0}) {
		t.Fatalf("swaps %+v", swaps)
	}
	if more := c.Plan(); len(more) != 0 {
		t.Errorf("a plan while 4's copy is in flight and no buffer is free: %+v", more)
	}
	c.Done(4)
	c.EvictDone(0)
	// Now 4 (host copy in its layer) is the only victim with a copy; 0 (backed) is hot again.
	foldUses(t, c, counts, map[int]uint32{0: 200})
	swaps = c.Plan()
	if len(swaps) != 1 || swaps[0] != (ExpertSwap{Slot: 0, Evict: 4, Promote: 0, WriteBack: -1}) {
		t.Fatalf("swaps %+v", swaps)
	}
	// 4 is being evicted: not promoted again, however hot, until EvictDone.
	foldUses(t, c, counts, map[int]uint32{4: 1000})
	c.Done(0)
	if more := c.Plan(); len(more) != 0 {
		t.Errorf("an expert promoted while its eviction is in flight: %+v", more)
	}
}

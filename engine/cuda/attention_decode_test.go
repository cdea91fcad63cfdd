package cuda

import "testing"

// The one-launch decode attention's grid and scratch (no device needed).

func TestDecodeGrid(t *testing.T) {
	for _, c := range []struct {
		name             string
		g                AttentionGeometry
		hb, groups, y    int
		capacity, splits int
	}{
		{"Drama 3: 8 heads a KV head, one block of them", fullAttention, 8, 1, 2, 1100, 32},
		{"odd: 3 heads on one KV head", oddAttention, 3, 1, 1, 40, 2},
		{"12 heads on one KV head: two blocks of 8", AttentionGeometry{Heads: 12, KVHeads: 1, HeadDim: 32}, 8, 2, 2, 33, 2},
		{"a cache of one row", fullAttention, 8, 1, 2, 1, 1},
	} {
		hb, groups := c.g.decodeGroups()
		if hb != c.hb || groups != c.groups || c.g.decodeBlocksY() != c.y {
			t.Errorf("%s: %d heads a block in %d groups, %d block rows; want %d, %d, %d", c.name, hb, groups, c.g.decodeBlocksY(), c.hb, c.groups, c.y)
		}
		if s := decodeSplits(c.capacity); s != c.splits {
			t.Errorf("%s: %d splits for %d rows, want %d", c.name, s, c.capacity, c.splits)
		}
	}
	// The grid of B rows at the full geometry: about 128 blocks.
	for _, c := range []struct{ n, capacity, splits int }{{1, 1100, 32}, {2, 1100, 32}, {4, 1100, 16}, {8, 1100, 8}, {8, 40, 2}, {1, 40, 2}} {
		if s := fullAttention.decodeGridSplits(c.n, c.capacity); s != c.splits {
			t.Errorf("%d rows over a %d-row cache: %d splits, want %d", c.n, c.capacity, s, c.splits)
		}
	}
}

// TestDecodeScratch: the decode's partials of a B-row step fit the region
// the four kernels' float64 partials take (the layer's scratch is not
// grown), and the plan's counters hold a B-row step's tails.
func TestDecodeScratch(t *testing.T) {
	for _, g := range []AttentionGeometry{fullAttention, oddAttention} {
		if !g.decodeSupports() {
			t.Fatalf("%+v: the decode must take Drama 3's geometry and the odd checkpoint's", g)
		}
		for _, capacity := range []int{1, 40, 1100, 4096} {
			for _, rows := range []int{1, MaxStepRows} {
				sl := g.scratchLayoutBlocks(rows, rows, capacity)
				if need, room := g.decodePartBytes(rows, capacity), sl.attn-sl.part; need > room {
					t.Errorf("%d heads of %d, capacity %d, %d rows: partials of %d bytes in %d", g.Heads, g.HeadDim, capacity, rows, need, room)
				}
			}
		}
		p := BackbonePlan{Attention: g}
		if p.headCounters() < g.decodeCounters(MaxStepRows) {
			t.Errorf("%+v: %d head counters for %d decode tails", g, p.headCounters(), g.decodeCounters(MaxStepRows))
		}
	}
	if p := (BackbonePlan{}); p.headCounters() != 0 {
		t.Errorf("a plan without attention or DeltaNet layers: %d head counters", p.headCounters())
	}
	if g := (AttentionGeometry{Heads: 2, KVHeads: 1, HeadDim: 6}); g.decodeSupports() {
		t.Error("head dims that are not float4s must be refused")
	}
	if g := (AttentionGeometry{Heads: 2, KVHeads: 1, HeadDim: 260}); g.decodeSupports() {
		t.Error("head dims past 256 must be refused")
	}
}

package cuda

import "testing"

// TestMoEDownStreamGrid: the items are dealt in equal rounds to at most the
// blocks allowed, every item to some block, and no block left without one.
func TestMoEDownStreamGrid(t *testing.T) {
	for _, c := range []struct{ h, k, is, n, max, want int }{
		{2048, 8, 512, 4, 264, 218}, // 64 shared + 1 024 routed items: 5 rounds (4 would take 272 blocks)
		{2048, 8, 512, 2, 264, 192}, // 576 items: 3 rounds
		{2048, 8, 512, 8, 264, 242}, // 128 + 2 048 items: 9 rounds
		{2048, 8, 512, 4, 132, 121}, // one block an SM: 9 rounds
		{2048, 8, 512, 4, 1, 1},     // one block takes every item
		{136, 3, 56, 3, 1000, 33},   // 3 tiles: 6 shared + 27 routed items, one round
		{192, 2, 2048, 5, 7, 7},     // shared groups of one row (2048 inputs fill a buffer): 30 + 30 items, 9 rounds
	} {
		got := moeDownStreamGrid(c.h, c.k, c.is, c.n, c.max)
		nt := (c.h + 63) / 64
		g := max(1, min(4, 2048/c.is))
		items := 2*nt*((c.n+g-1)/g) + nt*c.n*c.k
		rounds := (items + c.max - 1) / c.max
		if got != c.want || got > c.max || got*rounds < items || (got-1)*rounds >= items {
			t.Errorf("h %d k %d is %d n %d, at most %d blocks: %d blocks for %d items in %d rounds, want %d", c.h, c.k, c.is, c.n, c.max, got, items, rounds, c.want)
		}
	}
	if got := moeDownStreamGrid(2048, 8, 512, 4, 0); got != 0 {
		t.Errorf("no blocks allowed: %d", got)
	}
	for v, want := range map[string]int{"0": 0, "1": 1, "2": 2, "": 2, "x": 2} {
		if got := moeDownStreamSetting(v); got != want {
			t.Errorf("setting %q: %d blocks an SM, want %d", v, got, want)
		}
	}
}

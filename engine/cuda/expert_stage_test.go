package cuda

import (
	"reflect"
	"testing"
)

func TestExpertRuns(t *testing.T) {
	for _, c := range []struct {
		want, has string // one character an expert: x true, . false
		runs      [][2]int
	}{
		{"........", "........", nil},
		{"xxxxxxxx", "........", [][2]int{{0, 8}}},
		{"xxxxxxxx", "xxxxxxxx", nil},
		{"x.xx...x", "........", [][2]int{{0, 1}, {2, 4}, {7, 8}}},
		{"xxxxx...", ".x..x...", [][2]int{{0, 1}, {2, 4}}},
		{"...xx...", "xxx..xxx", [][2]int{{3, 5}}},
		{"x......x", "x.......", [][2]int{{7, 8}}},
	} {
		bools := func(s string) []bool {
			b := make([]bool, len(s))
			for i := range s {
				b[i] = s[i] == 'x'
			}
			return b
		}
		if got := expertRuns(bools(c.want), bools(c.has)); !reflect.DeepEqual(got, c.runs) {
			t.Errorf("want %s has %s: runs %v, want %v", c.want, c.has, got, c.runs)
		}
	}
}

func TestRoutedSet(t *testing.T) {
	used, err := routedSet([]int32{3, 0, 3, 5}, 6)
	if err != nil || !reflect.DeepEqual(used, []bool{true, false, false, true, false, true}) || countTrue(used) != 3 {
		t.Fatalf("routedSet: %v, %v", used, err)
	}
	for _, bad := range [][]int32{{0, 6}, {-1}} {
		if _, err := routedSet(bad, 6); err == nil {
			t.Errorf("routedSet(%v, 6) took an id outside the experts", bad)
		}
	}
}

// TestRoutedStagingPays: at the full geometry (E 256, k 8) under a 22 GiB
// cap's 19 host layers, routed staging instead of the in-place reads of
// each (row, expert) pair (passes below 32 rows; from there a pass copies
// whole layers, and routed staging is taken anyway) pays from 12 rows (the pairs'
// in-place reads and the routed experts part enough to pay the home layer's
// copy back) to 91 (from 92 the rows route to nearly every expert); at 22
// rows, from 7 host layers.
func TestRoutedStagingPays(t *testing.T) {
	for _, c := range []struct {
		n, layers int
		pays      bool
	}{
		{1, 19, false}, {2, 19, false}, {11, 19, false}, {12, 19, true}, {22, 19, true},
		{32, 19, true}, {60, 19, true}, {91, 19, true}, {92, 19, false}, {300, 19, false},
		{22, 1, false}, {22, 2, false}, {22, 6, false}, {22, 7, true},
	} {
		if got := routedStagingPays(c.n, 8, 256, c.layers); got != c.pays {
			t.Errorf("%d rows, %d host layers: pays %v, want %v", c.n, c.layers, got, c.pays)
		}
	}
}

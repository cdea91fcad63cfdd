package cuda

import (
	"slices"
	"testing"
)

// TestTowerFastRowsVariant: the measured choices at the tower's shapes,
// each a compiled B-row instance, and none for shapes it was not measured
// at or for 1–2 rows.
func TestTowerFastRowsVariant(t *testing.T) {
	for _, c := range []struct {
		rows, cols, n int
		want          string // "": the one-row split stays
	}{
		{2048, 4096, 8, "t64r4u1"}, {2048, 6144, 5, "t64r4u1"}, {2048, 2048, 8, "t64r4u1"},
		{2560, 2048, 8, "t32r4u2"}, {4097, 2048, 6, "t32r4u2"}, {1024, 2048, 8, ""},
		{2560, 2048, 4, "t64r4u1"}, {4097, 2048, 3, "t64r4u1"}, {1024, 2048, 4, "t256r4u1"},
		{2048, 4096, 4, ""}, {2048, 2048, 4, ""}, {2048, 6144, 4, ""},
		{2560, 2048, 2, ""}, {1024, 2048, 1, ""}, {192, 64, 8, ""}, {88, 136, 4, ""},
	} {
		v, ok := towerFastRowsVariant(c.rows, c.cols, c.n)
		got := ""
		if ok {
			got = v.Name()
			if !slices.Contains(GemvRowsVariants, v) {
				t.Errorf("%d × %d, %d rows: %s is not compiled", c.rows, c.cols, c.n, got)
			}
		}
		if got != c.want {
			t.Errorf("%d × %d, %d rows: %q, want %q", c.rows, c.cols, c.n, got, c.want)
		}
	}
}

func TestParseTowerFastRows(t *testing.T) {
	for s, want := range map[string]bool{"": true, "1": true, "0": false} {
		if got, err := parseTowerFastRows(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"on", "off", "2"} {
		if _, err := parseTowerFastRows(s); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

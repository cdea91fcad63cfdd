package cuda

import "testing"

func TestParseTowerAttn(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    towerAttn
		refused bool
	}{
		{in: "", want: towerAttn{byWidth: true}},
		{in: "few", want: towerAttn{few: true}},
		{in: "wide", want: towerAttn{}},
		{in: "16", want: towerAttn{few: true, keys: 16}},
		{in: "65536", want: towerAttn{few: true, keys: 1 << 16}},
		{in: "0", refused: true},
		{in: "-8", refused: true},
		{in: "65537", refused: true},
		{in: "narrow", refused: true},
		{in: "16 ", refused: true},
	} {
		got, err := parseTowerAttn(c.in)
		if c.refused {
			if err == nil {
				t.Errorf("PROSCENIUM_GPU_TOWER_ATTN=%q accepted as %+v", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("parseTowerAttn(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestTowerAttnChoose(t *testing.T) {
	rule, _ := parseTowerAttn("")
	forced, _ := parseTowerAttn("32")
	few, _ := parseTowerAttn("few")
	wide, _ := parseTowerAttn("wide")
	for _, c := range []struct {
		name     string
		a        towerAttn
		rows, hd int
		exact    bool
		few      bool
		keys     int
	}{
		{"rule, one row", rule, 1, 128, false, false, towerAttnKeys},
		{"rule, two rows", rule, 2, 128, false, false, towerAttnKeys},
		{"rule, three rows", rule, 3, 128, false, true, 128},
		{"rule, four rows", rule, 4, 128, false, true, 128},
		{"rule, eight rows", rule, 8, 128, false, true, 128},
		{"rule, wide heads", rule, 8, 160, false, false, towerAttnKeys},
		{"rule under exact, one row", rule, 1, 128, true, true, 0},
		{"rule under exact, eight rows", rule, 8, 128, true, true, 0},
		{"forced 32, one row", forced, 1, 128, false, true, 32},
		{"forced 32 under exact", forced, 4, 128, true, true, 32},
		{"forced 32, wide heads", forced, 4, 256, false, false, 32},
		{"few (64 a split), two rows", few, 2, 64, false, true, 0},
		{"wide, eight rows", wide, 8, 128, false, false, 0},
	} {
		gotFew, gotKeys := c.a.choose(c.rows, c.hd, c.exact)
		if gotFew != c.few || (gotFew && gotKeys != c.keys) {
			t.Errorf("%s: few %v, %d rows a split; want %v, %d", c.name, gotFew, gotKeys, c.few, c.keys)
		}
	}
}

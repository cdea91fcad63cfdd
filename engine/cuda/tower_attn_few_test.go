package cuda

import "testing"

func TestParseTowerAttn(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    towerAttn
		refused bool
	}{
		{in: "", want: towerAttn{few: true}},
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
	if k := (towerAttn{few: true, keys: 16}).splitKeys(4); k != 16 {
		t.Errorf("a forced 16 rows a split gave %d at four rows", k)
	}
	for _, n := range []int{1, 2, 4, 8} {
		if k := (towerAttn{few: true}).splitKeys(n); k < 1 {
			t.Errorf("%d rows a split at %d frame rows", k, n)
		}
	}
}

package cuda

import "testing"

func TestParseTowerFusion(t *testing.T) {
	for _, c := range []struct {
		in   string
		want towerFusion
		ok   bool
	}{
		{"", defaultTowerFusion, true},
		{"plain", towerFusion{}, true},
		{"gateup", towerFusion{gateUp: true}, true},
		{"gateup+", towerFusion{}, false},
		{"regnorms", towerFusion{}, false},
		{"fast", towerFusion{}, false},
		{"plain+gateup", towerFusion{}, false},
	} {
		got, err := parseTowerFusion(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("parseTowerFusion(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
		}
	}
	for _, f := range towerFusionVariants {
		if got, err := parseTowerFusion(f.String()); err != nil || got != f {
			t.Errorf("parseTowerFusion(%q) = %v, %v: does not read back", f.String(), got, err)
		}
	}
}

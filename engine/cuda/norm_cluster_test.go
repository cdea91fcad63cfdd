package cuda

import "testing"

// TestNormClusterRows checks where the switch sends a norm tail: fast, sm_90
// or later, 1 … normClusterMaxRows rows, and nowhere when it is off.
func TestNormClusterRows(t *testing.T) {
	prev := normCluster
	defer func() { normCluster = prev }()
	for _, c := range []struct {
		on    bool
		n     int
		exact bool
		major int
		want  bool
	}{
		{true, 1, false, 9, true}, {true, 4, false, 9, true}, {true, normClusterMaxRows, false, 10, true},
		{true, normClusterMaxRows + 1, false, 9, false}, {true, 60, false, 9, false}, {true, 0, false, 9, false},
		{true, 1, true, 9, false}, {true, 1, false, 8, false}, {false, 1, false, 9, false},
	} {
		normCluster = c.on
		if got := normClusterRows(c.n, c.exact, c.major); got != c.want {
			t.Errorf("switch %v, %d rows, exact %v, sm_%d0: %v, want %v", c.on, c.n, c.exact, c.major, got, c.want)
		}
	}
}

package cuda

import "testing"

// TestChooseGemmFast: the experts of a prefill take the narrowest X tile
// holding the mean pairs per expert; dense GEMMs take 16-row W tiles only
// when 64-row ones would give the SMs fewer than two blocks each; every
// choice is a compiled instance and its grid covers the output.
func TestChooseGemmFast(t *testing.T) {
	for _, c := range []struct {
		n, rows, groups int
		want            string
	}{
		{60 * 8, 1024, 256, "x3m64n8"},   // a 60-row prefill: ~2 pairs an expert
		{300 * 8, 1024, 256, "x3m64n16"}, // ~9
		{700 * 8, 2048, 256, "x3m64n32"}, // ~22
		{70 * 3, 136, 6, "x3m64n32"},
		{60, 2048, 0, "x3m16n64"},   // 1 × 32 tiles of 64
		{60, 12352, 0, "x3m16n64"},  // 193
		{256, 2048, 0, "x3m16n64"},  // 4 × 32 = 128 tiles of 64: too few
		{256, 12352, 0, "x3m64n64"}, // 772
	} {
		got := ChooseGemmFast(c.n, c.rows, c.groups)
		x, ok := gemmX3Instances[got]
		if !ok {
			t.Fatalf("%+v: %q is not a compiled instance", c, got)
		}
		want := c.want
		if c.groups == 0 && ((c.n+63)/64)*((c.rows+63)/64) < 2*132 {
			want = "x3m16n64"
		}
		if got != want {
			t.Errorf("n %d rows %d groups %d: %s, want %s", c.n, c.rows, c.groups, got, want)
		}
		g := Gemm{N: c.n, Rows: c.rows, Cols: 64, Groups: c.groups}
		grid := g.x3Grid(x)
		if grid[1]*x.bm < c.rows || (c.groups == 0 && grid[0]*x.bn < c.n) || (c.groups > 0 && (grid[0] != 1 || grid[2] != c.groups)) {
			t.Errorf("%+v on %s: grid %v does not cover the output", c, got, grid)
		}
	}
}

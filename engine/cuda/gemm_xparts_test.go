package cuda

import "testing"

// TestGemmXPartsTail: the full geometry's dense GEMMs whose 128 × 64 grid
// leaves a last round mostly idle get the tail split, and only they.
func TestGemmXPartsTail(t *testing.T) {
	for _, c := range []struct {
		what          string
		n, rows, cols int
		rows1, z      int
	}{
		{"DeltaNet in, 700 rows: 1067 blocks", 700, 12352, 2048, 12288, 8},
		{"DeltaNet in, 300 rows: 485 blocks (second round 84 % full)", 300, 12352, 2048, 0, 0},
		{"qkv, 700 rows: 792 blocks, three whole rounds", 700, 9216, 2048, 0, 0},
		{"DeltaNet in, 60 rows: under a round", 60, 12352, 2048, 0, 0},
		{"DeltaNet in, 2048 rows: 3104 blocks, 11 rounds and 200", 2048, 12352, 2048, 0, 0},
		{"a short matrix: too few steps to split", 700, 12352, 96, 0, 0},
	} {
		rows1, z := gemmXPartsTail(c.n, c.rows, c.cols)
		if rows1 != c.rows1 || z != c.z {
			t.Errorf("%s: rows1 %d, z %d; want %d, %d", c.what, rows1, z, c.rows1, c.z)
		}
	}
}

// TestGemmXPartsKernel: the X-parts entry points are the dense q tiles'
// and the split tile's; no other instance has one.
func TestGemmXPartsKernel(t *testing.T) {
	want := map[string]string{
		"p3m128n64q": "gemm_xp_bf16_m128n64q", "p3m128n32q": "gemm_xp_bf16_m128n32q", "p3m64n32q": "gemm_xp_bf16_m64n32q",
	}
	for name, x := range gemmMmaInstances {
		w := want[name]
		if x.splits > 0 {
			w = "gemm_xp_bf16_m128n64qz" // every split count shares the split tile's entry
		}
		k, split, ok := gemmXPartsKernel(x)
		if k != w || ok != (w != "") || split != (x.splits > 0) {
			t.Errorf("%s: x parts %q (split %v, ok %v), want %q", name, k, split, ok, w)
		}
	}
	if err := GemmXPartsSetting("sideways"); err == nil {
		t.Errorf("%s=sideways: no error", GemmXPartsEnv)
	}
}

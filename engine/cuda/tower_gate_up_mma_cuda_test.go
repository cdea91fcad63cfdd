//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/drama3"
)

// TestTowerGateUpMMA holds the tensor-core B-row gate·up
// (tower_gate_up_swiglu_mma_fast) to silu(W1·x)·(W3·x) summed in float64
// from the same BF16 weights and float32 rows, and to the SIMT B-row gate·up
// (tower_gate_up_swiglu_rows*, whose rows have the one-row kernel's bits):
// Drama 3's tower shape (6144 × 2048) at 1–8 rows, a ragged one (1000 rows:
// a last block of 8; 512 columns: one step a warp), a narrow one (88 × 64:
// the odd tower's FFN rows, the demo tower's columns), and rows scaled by
// 10⁻⁵ and 10⁴. Every output a row owns is written (the buffer is poisoned)
// and no other.
func TestTowerGateUpMMA(t *testing.T) {
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast // the tensor-core path is fast only
	defer func() { dev.Numerics = prev }()
	r := newRand(t)
	type gateUpCase struct {
		F, D, n int
		scale   float32
	}
	var cases []gateUpCase
	for _, n := range []int{1, 2, 3, 4, 8} {
		cases = append(cases, gateUpCase{6144, 2048, n, 1})
	}
	cases = append(cases, gateUpCase{1000, 512, 5, 1}, gateUpCase{88, 64, 4, 1},
		gateUpCase{6144, 2048, 4, 1e-5}, gateUpCase{6144, 2048, 4, 1e4})
	for _, c := range cases {
		t.Run(fmt.Sprintf("%dx%d_rows_%d_x×%g", c.F, c.D, c.n, c.scale), func(t *testing.T) {
			w1, w3 := roundBF16(r, c.F, c.D), roundBF16(r, c.F, c.D)
			var a testArena
			var lw TowerLayerTensors
			a.bf16(&lw.W1, w1)
			a.bf16(&lw.W3, w3)
			a.upload(t)
			x := randNonZero(r, c.n*c.D)
			for i := range x {
				x[i] *= c.scale
			}
			tw := &Tower{g: TowerGeometry{FFN: c.F, Dim: c.D}, fuse: defaultTowerFusion, normed: upload(t, x)}
			run := func(mma bool) []float32 {
				tw.gate = poisoned(t, (c.n+1)*c.F) // a row past n: must stay unwritten
				tw.gateUpMMA = towerGateUpMMA{}
				if mma {
					tw.gateUpMMA = towerGateUpMMA{from: 1, anyShape: true}
				}
				if tw.gateUpRowsOnMMA(c.n, false) != mma {
					t.Fatalf("gateUpMMA %+v: on the tensor cores %v, want %v", tw.gateUpMMA, !mma, mma)
				}
				if err := dev.Run(func(q *Queue) error { return tw.gateUpRows(q, &lw, c.n) }); err != nil {
					t.Fatal(err)
				}
				return download(t, tw.gate, (c.n+1)*c.F)
			}
			simt, mma := run(false), run(true)
			for i, v := range mma[c.n*c.F:] {
				if !math.IsNaN(float64(v)) {
					t.Fatalf("row %d's output %d written (%v): past the %d rows", c.n, i, v, c.n)
				}
			}
			want := make([]float32, c.n*c.F)
			for b := 0; b < c.n; b++ {
				xb := x[b*c.D : (b+1)*c.D]
				for j := 0; j < c.F; j++ {
					var g, u float64
					for k, v := range xb {
						g += float64(w1[j*c.D+k]) * float64(v)
						u += float64(w3[j*c.D+k]) * float64(v)
					}
					want[b*c.F+j] = float32(g / (1 + math.Exp(-g)) * u)
				}
			}
			checkClose(t, "SIMT gate·up against float64", simt[:c.n*c.F], want, 1e-5)
			checkClose(t, "tensor-core gate·up against float64", mma[:c.n*c.F], want, 1e-5)
			checkClose(t, "tensor-core gate·up against the SIMT one", mma[:c.n*c.F], simt[:c.n*c.F], 1e-5)
		})
	}
}

// TestTowerGateUpMMAUse: the rule that puts a frame's gate·up on the tensor
// cores, and the override's parse.
func TestTowerGateUpMMAUse(t *testing.T) {
	def, err := parseTowerGateUpMMA("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		F, D, n int
		exact   bool
		want    bool
	}{
		{6144, 2048, 1, false, false},
		{6144, 2048, 2, false, true},
		{6144, 2048, 4, false, true},
		{6144, 2048, 8, false, true},
		{6144, 2048, 4, true, false}, // exact: the one-row bits in a batch
		{4096, 2048, 4, false, true},
		{4000, 2048, 4, false, false}, // too few blocks
		{6144, 2040, 4, false, false}, // columns not a multiple of 32
	} {
		if got := def.use(c.F, c.D, c.n, c.exact); got != c.want {
			t.Errorf("default rule, %d × %d, %d rows, exact %v: %v, want %v", c.F, c.D, c.n, c.exact, got, c.want)
		}
	}
	for _, s := range []string{"x", "1", "9", "-2", "4.0"} {
		if _, err := parseTowerGateUpMMA(s); err == nil {
			t.Errorf("PROSCENIUM_GPU_TOWER_GATEUP_MMA=%q accepted", s)
		}
	}
	if m, err := parseTowerGateUpMMA("0"); err != nil || m.use(6144, 2048, 8, false) {
		t.Errorf(`"0": %+v, %v; want never`, m, err)
	}
	if m, err := parseTowerGateUpMMA("4"); err != nil || m.use(6144, 2048, 3, false) || !m.use(6144, 2048, 4, false) {
		t.Errorf(`"4": %+v, %v; want from four rows`, m, err)
	}
}

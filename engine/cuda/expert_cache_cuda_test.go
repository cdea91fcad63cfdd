//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// TestExpertTable: the expert kernels a decode step runs (the gathered
// gate·up GEMV, moe_down, moe_down_rows) read each expert where the expert
// cache's table says (kernels/expert_addr.cuh) with the bits they have
// reading the packed layout: the experts copied to other places in another
// buffer, in another order, the table pointing there. moe_down and
// moe_down_rows tally each routed pair in the layer's statistics: a use of
// its expert, and a hit, or a miss where the entry has the host bit.
func TestExpertTable(t *testing.T) { eachNumerics(t, testExpertTable) }

func testExpertTable(t *testing.T) {
	r := newRand(t)
	const h, i, ip, p, e, k, is, E, n = 136, 40, 48, 128, 6, 3, 56, 6, 2
	per, ns := h*ip, FP8ScaleCount(h, ip)
	wq, sc := randFP8(r, e*per), make([]float32, e*ns)
	for j := range sc {
		sc[j] = float32(1e-3 * (1 + 9*r.Float64()))
	}
	// The same experts in another buffer, expert m at place perm[m], one
	// place apart more than needed (nothing lines up with the packed layout).
	perm := []int{4, 0, 5, 2, 1, 3}
	gap := per + 256
	wq2, sc2 := make([]uint8, e*gap), make([]float32, e*(ns+8))
	for m, at := range perm {
		copy(wq2[at*gap:], wq[m*per:(m+1)*per])
		copy(sc2[at*(ns+8):], sc[m*ns:(m+1)*ns])
	}
	W, S, W2, S2 := upload(t, wq), upload(t, sc), upload(t, wq2), upload(t, sc2)
	// The table: [e][4] words (gate_up matrix and scales, down matrix and
	// scales: both parts are the same matrices here), odd experts on "host".
	words := make([]uint32, e*kernel.ExpertWords*2)
	for m, at := range perm {
		wa, sa := uint64(W2.Ptr)+uint64(at*gap), uint64(S2.Ptr)+uint64(at*(ns+8)*4)
		if m%2 == 1 {
			wa |= kernel.ExpertHostBit
		}
		for j, v := range []uint64{wa, sa, wa, sa} {
			words[(m*kernel.ExpertWords+j)*2], words[(m*kernel.ExpertWords+j)*2+1] = uint32(v), uint32(v>>32)
		}
	}
	table := upload(t, words)
	stats := upload(t, make([]uint32, kernel.ExpertStatUses+e))
	xr := ExpertRef{Table: devPtr(table), Stats: devPtr(stats)}

	ids := distinctIDs(r, k, e)
	idsRows := append(append([]int32{}, ids...), distinctIDs(r, k, e)...)
	gu := randNonZero(r, n*k*2*p)
	sh := bf16s(randNonZero(r, h*is))
	dense := randNonZero(r, n*(E+2*is))
	x := randNonZero(r, k*ip)
	idb, idrb, gub, shb, db, xb := upload(t, ids), upload(t, idsRows), upload(t, gu), upload(t, sh), upload(t, dense), upload(t, x)
	run := func(what string, ref ExpertRef, f func(q *Queue, xr ExpertRef, y *Block) error, outs int) {
		t.Helper()
		packed, tabled := poisoned(t, outs), poisoned(t, outs)
		if err := dev.Run(func(q *Queue) error { return firstErr(f(q, ExpertRef{}, packed), f(q, ref, tabled)) }); err != nil {
			t.Fatal(err)
		}
		a, b := download(t, packed, outs), download(t, tabled, outs)
		for j := range a {
			if math.Float32bits(a[j]) != math.Float32bits(b[j]) || a[j] != a[j] {
				t.Fatalf("%s: output %d: %g through the table, %g packed", what, j, b[j], a[j])
			}
		}
	}
	run("gathered gemv", ExpertRef{Table: xr.gateUp()}, func(q *Queue, xr ExpertRef, y *Block) error {
		g := q.backboneGemv(Gemv{Rows: h, Cols: ip, N: k, Ids: idb, Mats: e, XStride: ip, Table: xr.gateUp()}, true)
		return q.GemvFP8(g, y, W, S, xb)
	}, k*h)
	run("moe down", xr, func(q *Queue, xr ExpertRef, y *Block) error {
		return q.MoEDown(y, W, S, 0, 0, true, e, idb, gub, p, i, ip, k, shb, db, E, is, h, xr)
	}, (k+1)*h)
	run("moe down rows", xr, func(q *Queue, xr ExpertRef, y *Block) error {
		ys := &Block{Kind: DeviceMem, Ptr: y.Ptr + uintptr(n*k*h*4), Bytes: int64(n * h * 4)}
		return q.MoEDownRows(y, ys, W, S, 0, 0, true, e, idrb, gub, p, i, ip, k, shb, db, E+2*is, E, is, h, n, xr)
	}, (n*k+n)*h)

	// moe down counted its k pairs, moe down rows its n·k.
	got := make([]uint32, kernel.ExpertStatUses+e)
	if err := Download(dev, got, stats, 0); err != nil {
		t.Fatal(err)
	}
	want := make([]uint32, kernel.ExpertStatUses+e)
	for _, m := range append(append([]int32{}, ids...), idsRows...) {
		want[kernel.ExpertStatUses+int(m)]++
		want[map[bool]int{false: kernel.ExpertStatHits, true: kernel.ExpertStatMisses}[m%2 == 1]]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statistics %v, want %v (hits, misses, uses)", got, want)
	}
}

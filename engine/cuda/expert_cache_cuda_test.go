//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// TestExpertTable: the expert kernels a decode step runs (the gathered
// gate·up GEMV, the routed gate·up, moe_down, moe_down_rows) read each
// expert where the expert
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
	xr := tabledExperts(t, wq, sc, e, per, ns)
	stats := upload(t, make([]uint32, kernel.ExpertStatUses+e))
	xr.Stats = devPtr(stats)
	W, S := upload(t, wq), upload(t, sc)

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
		g := q.backboneGemv(Gemv{Rows: h, Cols: ip, N: k, Ids: idb, Mats: e, XStride: ip, Table: xr.gateUp()}, true, siteOther)
		return q.GemvFP8(g, y, W, S, xb)
	}, k*h)
	// The routed gate·up (one row routed over E of the logits in dense) on
	// the h×ip matrices as gate·up ones, in an instance compiled with the
	// routing under either policy.
	rids, rwts := alloc(t, k*4), alloc(t, k*4)
	run("routed gate·up", ExpertRef{Table: xr.gateUp()}, func(q *Queue, xr ExpertRef, y *Block) error {
		g := q.backboneGemv(Gemv{Rows: h, Cols: ip, N: k, Ids: rids, Mats: e, Table: xr.gateUp()}, true, siteOther)
		g.Variant = GemvVariant{32, 8, 1}
		ok, err := q.MoEGateUpRoute(g, y, rids, rwts, db, 1, E+2*is, E, k, W, S, xb, ip)
		if err == nil && !ok {
			err = fmt.Errorf("no moe_gate_up instance %s", g.Variant.Name())
		}
		return err
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

// tabledExperts copies the e matrices of per bytes each in w (and, FP8,
// their ns scales each in s; nil for BF16) to another buffer, expert m at
// place (5m + 3) mod e (e not a multiple of 5), a place apart more than a
// matrix (nothing lines up with the packed layout), and returns the expert
// table pointing there: both parts (gate·up and down) at the same matrices,
// odd experts marked as read from host memory (the kernels mask the bit;
// the statistics count them as misses).
func tabledExperts(t *testing.T, w []uint8, s []float32, e, per, ns int) ExpertRef {
	t.Helper()
	if e%5 == 0 {
		t.Fatalf("tabledExperts: %d experts (5m + 3 mod e is no permutation)", e)
	}
	gap, sgap := per+256, ns+8
	w2, s2 := make([]uint8, e*gap), make([]float32, max(e*sgap, 1))
	for m := range e {
		at := (5*m + 3) % e
		copy(w2[at*gap:], w[m*per:(m+1)*per])
		if s != nil {
			copy(s2[at*sgap:], s[m*ns:(m+1)*ns])
		}
	}
	W2, S2 := upload(t, w2), upload(t, s2)
	words := make([]uint32, e*kernel.ExpertWords*2)
	for m := range e {
		at := (5*m + 3) % e
		wa, sa := uint64(W2.Ptr)+uint64(at*gap), uint64(S2.Ptr)+uint64(at*sgap*4)
		if m%2 == 1 {
			wa |= kernel.ExpertHostBit
		}
		for j, v := range []uint64{wa, sa, wa, sa} {
			words[(m*kernel.ExpertWords+j)*2], words[(m*kernel.ExpertWords+j)*2+1] = uint32(v), uint32(v>>32)
		}
	}
	return ExpertRef{Table: devPtr(upload(t, words))}
}

// bf16Bytes is v's BF16 values as the bytes of their little-endian layout.
func bf16Bytes(v []uint16) []uint8 {
	b := make([]uint8, 2*len(v))
	for i, x := range v {
		b[2*i], b[2*i+1] = uint8(x), uint8(x>>8)
	}
	return b
}

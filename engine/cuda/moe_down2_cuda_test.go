//go:build cuda

package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// withMoEDown2 runs f with $PROSCENIUM_GPU_MOE_DOWN2's switch set to on
// (MoEDown and MoEDownRows then launch moe_down2 or the old kernels).
func withMoEDown2(on bool, f func() error) error {
	prev := moeDown2
	moeDown2 = on
	defer func() { moeDown2 = prev }()
	return f()
}

// moeDownCase is one shape of a step's down projections: n rows of k routed
// pairs of e experts [h, ip] (width i, gu pitch 2p), the shared expert [h,
// is] from the stacked projection (routing logits E wide, row pitch
// E + 2·is + 3).
type moeDownCase struct {
	fp8                         bool
	h, i, ip, p, e, k, is, E, n int
	bigScales                   bool
}

// moeDownData is a case's inputs on the device.
type moeDownData struct {
	W, S, Ws, ids, gu, dense *Block
	dstride                  int
}

func newMoEDownData(t *testing.T, r *rand.Rand, c moeDownCase) moeDownData {
	t.Helper()
	per := c.h * c.ip
	var d moeDownData
	if c.fp8 {
		ns := FP8ScaleCount(c.h, c.ip)
		sc := make([]float32, c.e*ns)
		for i := range sc {
			sc[i] = float32(1e-3 * (1 + 9*r.Float64()))
			if c.bigScales && i%3 == 1 {
				sc[i] = float32(256 + 700*r.Float64())
			}
		}
		d.W, d.S = upload(t, randFP8(r, c.e*per)), upload(t, sc)
	} else {
		d.W = upload(t, bf16s(randNonZero(r, c.e*per)))
	}
	d.Ws = upload(t, bf16s(randNonZero(r, c.h*c.is)))
	d.dstride = c.E + 2*c.is + 3
	var ids []int32
	for row := 0; row < c.n; row++ {
		ids = append(ids, distinctIDs(r, c.k, c.e)...) // rows share experts when e is small
	}
	d.ids, d.gu, d.dense = upload(t, ids), upload(t, randNonZero(r, c.n*c.k*2*c.p)), upload(t, randNonZero(r, c.n*d.dstride))
	return d
}

// TestMoEDown2MatchesMoEDown: moe_down2 ($PROSCENIUM_GPU_MOE_DOWN2) gives
// every routed and shared output the bits of the kernels it replaces —
// moe_down_rows over n rows, moe_down for one (itself held to engine/cpu,
// bit for bit under exact and within tolerance under fast, by TestMoEDown)
// — under both policies: Drama 3's shape at 1, 2, 3, 4, 5 and 8 rows (the
// shared expert's row groups of four, full and partial), FP8 with scales
// ≥ 2⁸, ragged shapes (rows not a multiple of a block's 64, narrow experts
// whose lanes hold no chunk), BF16 experts over two rounds of chunks, and
// shared experts too wide for four rows' staging (groups of three and two).
func TestMoEDown2MatchesMoEDown(t *testing.T) { eachNumerics(t, testMoEDown2MatchesMoEDown) }

func testMoEDown2MatchesMoEDown(t *testing.T) {
	r := newRand(t)
	var cases []moeDownCase
	for _, n := range []int{1, 2, 3, 4, 5, 8} {
		cases = append(cases, moeDownCase{true, 2048, 512, 512, 512, 24, 8, 512, 257, n, false})
	}
	cases = append(cases,
		moeDownCase{true, 136, 40, 48, 128, 6, 3, 56, 6, 3, false},
		moeDownCase{true, 300, 200, 208, 256, 6, 3, 56, 6, 5, true},
		moeDownCase{false, 136, 40, 40, 40, 6, 3, 56, 6, 8, false},
		moeDownCase{false, 200, 520, 520, 520, 5, 2, 96, 7, 2, false},
		moeDownCase{true, 256, 512, 512, 512, 9, 4, 1040, 9, 7, false},
		moeDownCase{true, 192, 256, 256, 256, 9, 2, 2048, 9, 5, false},
	)
	for _, c := range cases {
		t.Run(fmt.Sprintf("fp8_%v_%dx%d_shared_%d_rows_%d", c.fp8, c.h, c.ip, c.is, c.n), func(t *testing.T) {
			d := newMoEDownData(t, r, c)
			rows := func(on bool) ([]float32, []float32) {
				// MoEDownRows checks row 0's view as the one-row launch's (k + 1
				// rows: the shared expert's among them), so one row needs k + 1.
				yr, ys := poisoned(t, max(c.n*c.k, c.k+1)*c.h), poisoned(t, c.n*c.h)
				if err := dev.Run(func(q *Queue) error {
					return withMoEDown2(on, func() error {
						return q.MoEDownRows(yr, ys, d.W, d.S, 0, 0, c.fp8, c.e, d.ids, d.gu, c.p, c.i, c.ip, c.k, d.Ws, d.dense, d.dstride, c.E, c.is, c.h, c.n, ExpertRef{})
					})
				}); err != nil {
					t.Fatal(err)
				}
				return download(t, yr, c.n*c.k*c.h), download(t, ys, c.n*c.h)
			}
			oldR, oldS := rows(false)
			newR, newS := rows(true)
			down2SameBits(t, "routed", newR, oldR)
			down2SameBits(t, "shared", newS, oldS)
			if c.n != 1 {
				return
			}
			// One row through MoEDown: the shared expert's output is yr's row k.
			one := func(on bool) []float32 {
				y := poisoned(t, (c.k+1)*c.h)
				if err := dev.Run(func(q *Queue) error {
					return withMoEDown2(on, func() error {
						return q.MoEDown(y, d.W, d.S, 0, 0, c.fp8, c.e, d.ids, d.gu, c.p, c.i, c.ip, c.k, d.Ws, d.dense, c.E, c.is, c.h, ExpertRef{})
					})
				}); err != nil {
					t.Fatal(err)
				}
				return download(t, y, (c.k+1)*c.h)
			}
			old, got := one(false), one(true)
			down2SameBits(t, "one row", got, old)
			if dd, _ := ULPDiff(old[:c.k*c.h], oldR); dd != 0 {
				t.Errorf("moe_down and moe_down_rows differ on one row: %d values", dd)
			}
		})
	}
}

// TestMoEDown2MMA: moe_down2_mma_fast (fast: a B-row step's routed FP8
// down projections on the tensor cores, x as two FP16 parts scaled a
// 64-column step at a time) against moe_down2_fast's SIMT sums — itself held
// to the CPU by TestMoEDown — within 1e-5 of the outputs' norm: Drama 3's
// shape at 2, 3, 4 and 8 rows, rows sharing experts, a
// ragged last tile (300 rows), FP8 scales ≥ 2⁸, a SwiGLU width short of the
// 512 columns (the rest zero), and gate·up values 10⁻⁵ and 10⁴ times the
// usual (x far below and far above FP16's range before its scale). The
// shared expert's outputs keep moe_down2_fast's bits, and so does one row
// (MoEDown: the one-take step keeps the SIMT sums, measured faster there).
func TestMoEDown2MMA(t *testing.T) {
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast // the tensor-core path is fast only
	defer func() { dev.Numerics = prev }()
	r := newRand(t)
	type mmaCase struct {
		c     moeDownCase
		scale float32 // of the gate·up values
	}
	var cases []mmaCase
	for _, n := range []int{1, 2, 3, 4, 8} {
		cases = append(cases, mmaCase{moeDownCase{true, 2048, 512, 512, 512, 24, 8, 512, 257, n, false}, 1})
	}
	cases = append(cases,
		mmaCase{moeDownCase{true, 2048, 512, 512, 512, 9, 8, 512, 257, 4, true}, 1}, // rows share experts
		mmaCase{moeDownCase{true, 300, 500, 512, 512, 6, 3, 56, 6, 5, true}, 1},     // ragged, SwiGLU 500 wide
		mmaCase{moeDownCase{true, 2048, 512, 512, 512, 24, 8, 512, 257, 2, false}, 1e-5},
		mmaCase{moeDownCase{true, 2048, 512, 512, 512, 24, 8, 512, 257, 2, false}, 1e4},
	)
	for _, mc := range cases {
		c := mc.c
		t.Run(fmt.Sprintf("%dx%d_i%d_rows_%d_gu×%g", c.h, c.ip, c.i, c.n, mc.scale), func(t *testing.T) {
			d := newMoEDownData(t, r, c)
			if mc.scale != 1 {
				gu := download(t, d.gu, c.n*c.k*2*c.p)
				for j := range gu {
					gu[j] *= mc.scale
				}
				d.gu = upload(t, gu)
			}
			run := func(mma bool) ([]float32, []float32) {
				yr, ys := poisoned(t, max(c.n*c.k, c.k+1)*c.h), poisoned(t, c.n*c.h)
				if err := dev.Run(func(q *Queue) error {
					return withMoEDownMMA(mma, func() error {
						if c.n == 1 {
							return q.MoEDown(yr, d.W, d.S, 0, 0, true, c.e, d.ids, d.gu, c.p, c.i, c.ip, c.k, d.Ws, d.dense, c.E, c.is, c.h, ExpertRef{})
						}
						return q.MoEDownRows(yr, ys, d.W, d.S, 0, 0, true, c.e, d.ids, d.gu, c.p, c.i, c.ip, c.k, d.Ws, d.dense, d.dstride, c.E, c.is, c.h, c.n, ExpertRef{})
					})
				}); err != nil {
					t.Fatal(err)
				}
				if c.n == 1 { // MoEDown: the shared expert's output is yr's row k
					y := download(t, yr, (c.k+1)*c.h)
					return y[:c.k*c.h], y[c.k*c.h:]
				}
				return download(t, yr, c.n*c.k*c.h), download(t, ys, c.n*c.h)
			}
			simtR, simtS := run(false)
			mmaR, mmaS := run(true)
			if c.n > 1 { // the loads before the wait: the same sums
				aheadR, aheadS := runMoEDownAhead(t, d, c, ExpertRef{})
				aheadSameBits(t, "routed, loads ahead of the wait", aheadR, mmaR)
				aheadSameBits(t, "shared, loads ahead of the wait", aheadS, mmaS)
			}
			if c.n == 1 {
				if d, _ := ULPDiff(mmaR, simtR); d != 0 {
					t.Errorf("one row: %d of %d routed values differ from moe_down2_fast's (the one-take step keeps the SIMT sums)", d, len(simtR))
				}
			} else {
				checkClose(t, "routed down on the tensor cores", mmaR, simtR, 1e-5)
			}
			if d, _ := ULPDiff(mmaS, simtS); d != 0 {
				t.Errorf("shared expert: %d of %d values differ from moe_down2_fast's", d, len(simtS))
			}
		})
	}
}

// TestMoEDown2MMAExpertTable: moe_down2_mma_fast reads each routed expert
// where a host tier's expert table says (expert_addr.cuh) with the bits it
// has reading the packed layout, at four rows of Drama 3's down shape, and
// tallies each routed pair once (TestExpertTable's experts are too narrow
// for this kernel).
func TestMoEDown2MMAExpertTable(t *testing.T) {
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics = prev }()
	r := newRand(t)
	c := moeDownCase{true, 2048, 512, 512, 512, 9, 8, 512, 257, 4, false}
	d := newMoEDownData(t, r, c)
	per, ns := c.h*c.ip, FP8ScaleCount(c.h, c.ip)
	wq, sc := make([]uint8, c.e*per), make([]float32, c.e*ns)
	if err := firstErr(Download(dev, wq, d.W, 0), Download(dev, sc, d.S, 0)); err != nil {
		t.Fatal(err)
	}
	xr := tabledExperts(t, wq, sc, c.e, per, ns)
	stats := upload(t, make([]uint32, kernel.ExpertStatUses+c.e))
	xr.Stats = devPtr(stats)
	run := func(ref ExpertRef) []float32 {
		yr, ys := poisoned(t, c.n*c.k*c.h), poisoned(t, c.n*c.h)
		if err := dev.Run(func(q *Queue) error {
			return withMoEDownMMA(true, func() error {
				return q.MoEDownRows(yr, ys, d.W, d.S, 0, 0, true, c.e, d.ids, d.gu, c.p, c.i, c.ip, c.k, d.Ws, d.dense, d.dstride, c.E, c.is, c.h, c.n, ref)
			})
		}); err != nil {
			t.Fatal(err)
		}
		return download(t, yr, c.n*c.k*c.h)
	}
	packed, tabled := run(ExpertRef{}), run(xr)
	if n, _ := ULPDiff(tabled, packed); n != 0 {
		t.Errorf("through the table: %d of %d values differ from the packed layout's", n, len(packed))
	}
	got := make([]uint32, kernel.ExpertStatUses+c.e)
	if err := Download(dev, got, stats, 0); err != nil {
		t.Fatal(err)
	}
	// The loads ahead of the wait (moe_down2_mma_ahead_fast) read the table
	// there and tally after it: the same values and tallies again.
	if err := Upload(dev, stats, 0, make([]uint32, kernel.ExpertStatUses+c.e)); err != nil {
		t.Fatal(err)
	}
	ahead, _ := runMoEDownAhead(t, d, c, xr)
	aheadSameBits(t, "loads ahead, through the table", ahead, packed)
	again := make([]uint32, kernel.ExpertStatUses+c.e)
	if err := Download(dev, again, stats, 0); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(again) != fmt.Sprint(got) {
		t.Errorf("loads ahead: statistics %v, the kernel without them %v", again, got)
	}
	ids := make([]int32, c.n*c.k)
	if err := Download(dev, ids, d.ids, 0); err != nil {
		t.Fatal(err)
	}
	want := make([]uint32, kernel.ExpertStatUses+c.e)
	for _, m := range ids {
		want[kernel.ExpertStatUses+int(m)]++
		want[map[bool]int{false: kernel.ExpertStatHits, true: kernel.ExpertStatMisses}[m%2 == 1]]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statistics %v, want %v (hits, misses, uses)", got, want)
	}
}

// withMoEDownMMA runs f with moe_down2_mma_fast's switch set to on.
// runMoEDownAhead runs case c's down projections (n ≥ 2 rows) as a B-row
// step whose ids come from moe_route behind a gate·up by ids runs them
// (moeDownRows' idsBefore: moe_down2_mma_ahead_fast), returning the routed
// and shared outputs.
func runMoEDownAhead(t *testing.T, d moeDownData, c moeDownCase, xr ExpertRef) ([]float32, []float32) {
	t.Helper()
	yr, ys := poisoned(t, c.n*c.k*c.h), poisoned(t, c.n*c.h)
	if err := dev.Run(func(q *Queue) error {
		return withMoEDownMMA(true, func() error {
			return q.moeDownRows(true, yr, ys, d.W, d.S, 0, 0, true, c.e, d.ids, d.gu, c.p, c.i, c.ip, c.k, d.Ws, d.dense, d.dstride, c.E, c.is, c.h, c.n, xr)
		})
	}); err != nil {
		t.Fatal(err)
	}
	return download(t, yr, c.n*c.k*c.h), download(t, ys, c.n*c.h)
}

// aheadSameBits wants the loads-ahead kernel's outputs bit for bit those of
// the kernel without them: the same sums in the same order.
func aheadSameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if d, ulp := ULPDiff(got, want); d != 0 || len(got) != len(want) {
		t.Errorf("%s: %d of %d values differ from moe_down2_mma_fast's (up to %d ULP)", what, d, len(want), ulp)
	}
}

func withMoEDownMMA(on bool, f func() error) error {
	prev := moeDownMMA
	moeDownMMA = on
	defer func() { moeDownMMA = prev }()
	return f()
}

// down2SameBits holds moe_down2's outputs to the old kernel's: the same bits
// (the same sums in the same order). Under exact that is required (the
// CPU's bits); under fast a difference (ptxas contracting a product into
// an add otherwise in the other kernel) is logged with its ULPs and held
// to TestMoEDown's tolerance of the old kernel's values instead.
func down2SameBits(t *testing.T, what string, got, old []float32) {
	t.Helper()
	d, ulp := ULPDiff(got, old)
	switch {
	case d == 0:
		t.Logf("moe_down2 %s %s: %d values, the same bits", dev.Numerics, what, len(old))
	case dev.Numerics.Exact():
		t.Errorf("moe_down2 %s %s: %d of %d values differ from the old kernel's (up to %d ULP)", dev.Numerics, what, d, len(old), ulp)
	default:
		t.Logf("moe_down2 %s %s: %d of %d values differ from the old kernel's bits, by up to %d ULP (fast: held to 1e-5)", dev.Numerics, what, d, len(old), ulp)
		checkClose(t, "moe_down2 "+what, got, old, 1e-5)
	}
}

// TestMoEDown2Timing prints the device time of a step's down projections,
// old (moe_down / moe_down_rows) against moe_down2 (SIMT) and, under fast
// from two rows, moe_down2_mma_fast, at Drama 3's geometry
// (256 experts [2048, 512] FP8, top 8, the shared expert [2048, 512] BF16)
// for 1, 2, 4 and 8 rows: the mean of reps launches stream-ordered with PDL,
// each launch's rows routed to other experts (as the layers of a step: the
// weights from memory, not from L2, after the first pass over the 256 MB).
// Nothing is asserted.
func TestMoEDown2Timing(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	r := newRand(t)
	const reps, E, k, h, ip, is = 40, 256, 8, 2048, 512, 512
	c := moeDownCase{true, h, ip, ip, ip, E, k, is, E, 8, false}
	wq := tiled(randFP8(r, 1<<20), E*h*ip)
	sc := make([]float32, E*FP8ScaleCount(h, ip))
	for i := range sc {
		sc[i] = 1e-3
	}
	W, S := upload(t, wq), upload(t, sc)
	Ws := upload(t, bf16s(randNonZero(r, h*is)))
	dstride := E + 2*is + 3
	gu, dense := upload(t, randNonZero(r, c.n*k*2*ip)), upload(t, randNonZero(r, c.n*dstride))
	var ids []int32
	for i := 0; i < reps*c.n; i++ {
		ids = append(ids, distinctIDs(r, k, E)...)
	}
	idb := upload(t, ids)
	yr, ys := alloc(t, c.n*k*h*4), alloc(t, c.n*h*4)
	for _, n := range []int{1, 2, 4, 8} {
		for _, mode := range []string{"old", "moe_down2", "mma"} {
			on := mode != "old"
			if mode == "mma" && (dev.Numerics.Exact() || n == 1) {
				continue // the tensor-core down is fast's, for B-row steps
			}
			run := func(q *Queue) error {
				return withMoEDownMMA(mode == "mma", func() error {
					return withMoEDown2(on, func() error {
						for i := 0; i < reps; i++ {
							ib := &Block{Kind: idb.Kind, Ptr: idb.Ptr + uintptr(i*c.n*k*4), Bytes: int64(n * k * 4)}
							var err error
							if n == 1 {
								err = q.MoEDown(yr, W, S, 0, 0, true, E, ib, gu, ip, ip, ip, k, Ws, dense, E, is, h, ExpertRef{})
							} else {
								err = q.MoEDownRows(yr, ys, W, S, 0, 0, true, E, ib, gu, ip, ip, ip, k, Ws, dense, dstride, E, is, h, n, ExpertRef{})
							}
							if err != nil {
								return err
							}
						}
						return nil
					})
				})
			}
			if err := dev.Run(run); err != nil { // warm-up
				t.Fatal(err)
			}
			ms, err := dev.Time(run)
			if err != nil {
				t.Fatal(err)
			}
			mb := float64(n*k*h*ip+h*is*2*n) / 1e6 // the old kernel's bytes (moe_down2 reads the shared expert once per 4 rows)
			fmt.Printf("timing moe down %-9s %d rows (%5.1f MB old)  %7.2f µs\n", mode, n, mb, 1000*ms/reps)
		}
	}
}

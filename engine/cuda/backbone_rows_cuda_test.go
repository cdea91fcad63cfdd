//go:build cuda

package cuda

import (
	"fmt"
	"path/filepath"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/cuda/kernel"
)

// The B-row step (Backbone.StepRows) against each take stepped alone, and
// the several-row projection (gemvx) against the one-row GEMV it batches.

// TestGemvRowsMatchesOneRow: each row of a gemvx projection against
// engine/cpu (cpu.MatVec on the BF16 weights: the bits under exact, within
// 1e-5 relative under fast, as TestGemvBF16 holds the one-row GEMV; the
// tensor-core instance under fast too) and,
// where the same TPR, ROWS and UNROLL are compiled as a one-row instance,
// the bits that instance gives the row alone (under both policies: the sums
// run in the same order). At the step's shapes (the router and shared expert
// 1281 × 2048, an output projection 2048 × 4096, the shared down 2048 × 512,
// a ragged 200 × 136), with strided x and y.
func TestGemvRowsMatchesOneRow(t *testing.T) { eachNumerics(t, testGemvRowsMatchesOneRow) }

func testGemvRowsMatchesOneRow(t *testing.T) {
	r := newRand(t)
	shapes := []struct{ rows, cols, xpad, ypad int }{{1281, 2048, 0, 0}, {2048, 4096, 4, 3}, {2048, 512, 8, 0}, {200, 136, 4, 5}}
	oneRow := map[GemvVariant]bool{}
	for _, v := range GemvBF16Variants {
		oneRow[v] = true
	}
	for _, s := range shapes {
		wh := bf16s(randNonZero(r, s.rows*s.cols))
		wf := bf16ToF32(wh)
		W := upload(t, wh)
		variants := GemvRowsVariants
		if !dev.Numerics.Exact() && s.cols%32 == 0 {
			variants = append(variants[:len(variants):len(variants)], GemvRowsMMA)
		}
		for _, v := range variants {
			for _, nb := range []int{2, 3, 4, 5, 8} {
				t.Run(fmt.Sprintf("%dx%d/%s/%d", s.rows, s.cols, gemvRowsName(v), nb), func(t *testing.T) {
					xs, ys := s.cols+s.xpad, s.rows+s.ypad
					x := randNonZero(r, (nb-1)*xs+s.cols)
					xb := upload(t, x)
					y := poisoned(t, (nb-1)*ys+s.rows)
					g := GemvRows{Rows: s.rows, Cols: s.cols, NB: nb, XStride: xs, YStride: ys, Variant: v, F64: dev.Numerics.Exact()}
					if err := dev.Run(func(q *Queue) error { return q.GemvRowsBF16(g, y, W, xb) }); err != nil {
						t.Fatal(err)
					}
					got := download(t, y, (nb-1)*ys+s.rows)
					for b := 0; b < nb; b++ {
						row := got[b*ys : b*ys+s.rows]
						ref := make([]float32, s.rows)
						cpu.MatVec(ref, wf, x[b*xs:b*xs+s.cols], s.rows, s.cols)
						what := fmt.Sprintf("row %d of %d", b, nb)
						checkClose(t, what, row, ref, 1e-5)
						checkProjBitsIfExact(t, what, row, ref)
						if !oneRow[v] {
							continue
						}
						one := poisoned(t, s.rows)
						xr := upload(t, x[b*xs:b*xs+s.cols])
						g1 := Gemv{Rows: s.rows, Cols: s.cols, N: 1, Mats: 1, Variant: v, F64: g.F64}
						if err := dev.Run(func(q *Queue) error { return q.GemvBF16(g1, one, W, xr) }); err != nil {
							t.Fatal(err)
						}
						if differ, ulp := ULPDiff(row, download(t, one, s.rows)); differ != 0 {
							t.Fatalf("%s: %d of %d values differ from the one-row GEMV's (by up to %d ULP)", what, differ, s.rows, ulp)
						}
					}
					if nb > 1 && ys > s.rows {
						// The gaps between y rows are not written.
						for c := s.rows; c < ys; c++ {
							if v := got[c]; v == v {
								t.Fatalf("y's pitch gap at %d was written (%v)", c, v)
							}
						}
					}
				})
			}
		}
	}
}

// gemvRowsName names a several-row instance in test names and logs.
func gemvRowsName(v GemvVariant) string {
	if v == GemvRowsMMA {
		return "mma"
	}
	return v.Name()
}

// stepRowsTake is one take of TestBackboneStepRowsMatchTakesAlone: its
// prompt and step rows, the slot it runs in, and what it got.
type stepRowsTake struct {
	prompt, steps []BackboneRow
	slot, done    int
	begin         int // the step of the schedule at which it starts (its prefill)
	prefill, got  []float32
}

// TestBackboneStepRowsMatchTakesAlone runs five takes of different prompt
// lengths (1 to 30 rows, tokens and embedding rows) through one backbone of
// four slots: four begin together, and when the third ends its slot is
// reset and the fifth begins there mid-way. Each schedule step steps a
// different subset of the live takes in a shuffled order (B from 1 to 4).
// Every take's prompt and step outputs must equal those of the same take run
// alone on a one-slot backbone over the same weights (Prefill, then Step per
// row): the CPU's bits' equality under exact (both paths give the CPU's
// bits), within backboneTol relative under fast.
func TestBackboneStepRowsMatchTakesAlone(t *testing.T) {
	for _, dir := range backboneCheckpoints(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			r := newRand(t)
			ck := loadCheckpoint(t, dir)
			tc := &ck.Config.Text
			H := tc.HiddenSize
			const capacity, slots = 64, 4
			gb, err := LoadBackboneSlots(dev, ck, capacity, slots, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer gb.Close()
			plan1, err := PlanBackbone(ck.Config, gb.W.Layout.Experts[0], capacity)
			if err != nil {
				t.Fatal(err)
			}
			alone, err := NewBackbone(dev, gb.W, plan1)
			if err != nil {
				t.Fatal(err)
			}
			alone.borrowed = true
			defer alone.Close()

			lens := []int{7, 19, 1, 30, 4}
			nsteps := []int{14, 12, 5, 10, 8}
			takes := make([]*stepRowsTake, len(lens))
			for i := range takes {
				rows, _ := testRows(r, lens[i]+nsteps[i], tc.VocabSize, H)
				takes[i] = &stepRowsTake{prompt: rows[:lens[i]], steps: rows[lens[i]:], slot: []int{2, 0, 3, 1, 3}[i]}
			}
			begin := func(tk *stepRowsTake) {
				if err := gb.ResetSlot(tk.slot); err != nil {
					t.Fatal(err)
				}
				if err := gb.UseSlot(tk.slot); err != nil {
					t.Fatal(err)
				}
				if tk.prefill, err = gb.Prefill(tk.prompt); err != nil {
					t.Fatal(err)
				}
			}
			live := []*stepRowsTake{}
			for _, tk := range takes[:4] {
				begin(tk)
				live = append(live, tk)
			}
			widths := map[int]bool{}
			for step := 0; len(live) > 0; step++ {
				// A subset in shuffled order: every third step leaves one take out.
				order := r.Perm(len(live))
				if step%3 == 2 && len(order) > 1 {
					order = order[:len(order)-1]
				}
				rows, sl, who := []BackboneRow{}, []int{}, []*stepRowsTake{}
				for _, i := range order {
					tk := live[i]
					rows, sl, who = append(rows, tk.steps[tk.done]), append(sl, tk.slot), append(who, tk)
				}
				out, err := gb.StepRows(rows, sl)
				if err != nil {
					t.Fatal(err)
				}
				widths[len(rows)] = true
				for i, tk := range who {
					tk.got = append(tk.got, out[i*H:(i+1)*H]...)
					tk.done++
					if gb.SlotLen(tk.slot) != len(tk.prompt)+tk.done {
						t.Fatalf("slot %d holds %d rows after %d prompt rows and %d steps", tk.slot, gb.SlotLen(tk.slot), len(tk.prompt), tk.done)
					}
				}
				next := live[:0]
				for _, tk := range live {
					if tk.done < len(tk.steps) {
						next = append(next, tk)
						continue
					}
					if tk == takes[2] { // its slot takes the fifth take
						begin(takes[4])
						next = append(next, takes[4])
					}
				}
				live = next
			}
			t.Logf("step widths run: %v", widths)

			for i, tk := range takes {
				if err := alone.Reset(); err != nil {
					t.Fatal(err)
				}
				want, err := alone.Prefill(tk.prompt)
				if err != nil {
					t.Fatal(err)
				}
				checkSame(t, fmt.Sprintf("take %d prompt (slot %d)", i, tk.slot), tk.prefill, want, H, false)
				want = want[:0]
				for _, row := range tk.steps {
					h, err := alone.Step(row)
					if err != nil {
						t.Fatal(err)
					}
					want = append(want, h...)
				}
				checkSame(t, fmt.Sprintf("take %d steps (slot %d)", i, tk.slot), tk.got, want, H, !dev.Numerics.Exact())
			}

			// Bad steps are refused and change nothing.
			for _, c := range []struct {
				rows  int
				slots []int
			}{{2, []int{1, 1}}, {1, []int{slots}}, {2, []int{0}}, {0, nil}, {9, []int{0, 1, 2, 3, 0, 1, 2, 3, 0}}} {
				rows, _ := testRows(r, c.rows, tc.VocabSize, H)
				before := gb.SlotLen(0)
				if _, err := gb.StepRows(rows, c.slots); err == nil {
					t.Errorf("StepRows of %d rows on slots %v: no error", c.rows, c.slots)
				}
				if gb.SlotLen(0) != before {
					t.Errorf("a refused step moved slot 0 from %d to %d rows", before, gb.SlotLen(0))
				}
			}
		})
	}
}

// checkSame holds got to want: the same bits, or (tolerance) within
// backboneTol relative per row.
func checkSame(t *testing.T, what string, got, want []float32, width int, tolerance bool) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	differ, ulp := ULPDiff(got, want)
	worst := maxRowRelErr(t, what, got, want, width)
	t.Logf("%s: %d of %d values differ from the take alone (up to %d ULP), worst row %.3g relative", what, differ, len(got), ulp, worst)
	if tolerance {
		if worst > backboneTol {
			t.Errorf("%s: a row is %.3g off relative (bound %g)", what, worst, backboneTol)
		}
		return
	}
	if differ != 0 {
		t.Errorf("%s: %d of %d values differ from the take stepped alone", what, differ, len(got))
	}
}

// TestMoEDownRowsMatchesOneRow: moe_down_rows over n rows gives each row's
// routed and shared down projections the bits moe_down gives that row alone
// (itself held to engine/cpu by TestMoEDown), under both policies, FP8 and
// BF16 experts, with experts shared between rows. Under fast the FP8 routed
// sums of two rows or more run on the tensor cores by default
// (moe_down2_mma_fast, mma22: another order of the sums), so there they are
// held within 1e-5 of the one row's, and their bits with the SIMT path
// (PROSCENIUM_GPU_MOE_DOWN_MMA=0's).
func TestMoEDownRowsMatchesOneRow(t *testing.T) { eachNumerics(t, testMoEDownRowsMatchesOneRow) }

func testMoEDownRowsMatchesOneRow(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		fp8                         bool
		h, i, ip, p, e, k, is, E, n int
	}{
		{true, 2048, 512, 512, 512, 20, 8, 512, 257, 4},
		{true, 136, 40, 48, 128, 6, 3, 56, 6, 3},
		{false, 136, 40, 40, 40, 6, 3, 56, 6, 8},
	} {
		t.Run(fmt.Sprintf("fp8_%v_%dx%d_rows_%d", c.fp8, c.h, c.i, c.n), func(t *testing.T) {
			per := c.h * c.ip
			var W, S *Block
			if c.fp8 {
				ns := FP8ScaleCount(c.h, c.ip)
				sc := make([]float32, c.e*ns)
				for i := range sc {
					sc[i] = float32(1e-3 * (1 + 9*r.Float64()))
				}
				W, S = upload(t, randFP8(r, c.e*per)), upload(t, sc)
			} else {
				W = upload(t, bf16s(randNonZero(r, c.e*per)))
			}
			shb := upload(t, bf16s(randNonZero(r, c.h*c.is)))
			dstride := c.E + 2*c.is + 3
			var ids []int32
			for row := 0; row < c.n; row++ {
				ids = append(ids, distinctIDs(r, c.k, c.e)...) // rows share experts (k of e each)
			}
			gu := randNonZero(r, c.n*c.k*2*c.p)
			dense := randNonZero(r, c.n*dstride)
			idb, gub, db := upload(t, ids), upload(t, gu), upload(t, dense)
			rows := func(mma bool) ([]float32, []float32) {
				yr, ys := poisoned(t, c.n*c.k*c.h), poisoned(t, c.n*c.h)
				if err := dev.Run(func(q *Queue) error {
					return withMoEDownMMA(mma, func() error {
						return q.MoEDownRows(yr, ys, W, S, 0, 0, c.fp8, c.e, idb, gub, c.p, c.i, c.ip, c.k, shb, db, dstride, c.E, c.is, c.h, c.n, ExpertRef{})
					})
				}); err != nil {
					t.Fatal(err)
				}
				return download(t, yr, c.n*c.k*c.h), download(t, ys, c.n*c.h)
			}
			gotR, gotS := rows(false)
			// The default path differs from the SIMT one only where the
			// tensor-core down applies.
			onMMA := !dev.Numerics.Exact() && c.fp8 && c.ip == kernel.DownMmaK && c.i <= c.ip
			var mmaR, mmaS []float32
			if onMMA {
				mmaR, mmaS = rows(true)
			}
			for row := 0; row < c.n; row++ {
				y := poisoned(t, (c.k+1)*c.h)
				id1 := upload(t, ids[row*c.k:(row+1)*c.k])
				gu1 := upload(t, gu[row*c.k*2*c.p:(row+1)*c.k*2*c.p])
				d1 := upload(t, dense[row*dstride:(row+1)*dstride])
				if err := dev.Run(func(q *Queue) error {
					return q.MoEDown(y, W, S, 0, 0, c.fp8, c.e, id1, gu1, c.p, c.i, c.ip, c.k, shb, d1, c.E, c.is, c.h, ExpertRef{})
				}); err != nil {
					t.Fatal(err)
				}
				ref := download(t, y, (c.k+1)*c.h)
				if d, ulp := ULPDiff(gotR[row*c.k*c.h:(row+1)*c.k*c.h], ref[:c.k*c.h]); d != 0 {
					t.Fatalf("row %d: %d routed values differ from moe_down's (up to %d ULP)", row, d, ulp)
				}
				if d, ulp := ULPDiff(gotS[row*c.h:(row+1)*c.h], ref[c.k*c.h:]); d != 0 {
					t.Fatalf("row %d: %d shared values differ from moe_down's (up to %d ULP)", row, d, ulp)
				}
				if onMMA {
					if d, ulp := ULPDiff(mmaS[row*c.h:(row+1)*c.h], ref[c.k*c.h:]); d != 0 {
						t.Fatalf("row %d, the tensor-core path: %d shared values differ from moe_down's (up to %d ULP)", row, d, ulp)
					}
					checkClose(t, fmt.Sprintf("row %d's routed down on the tensor cores against moe_down's", row), mmaR[row*c.k*c.h:(row+1)*c.k*c.h], ref[:c.k*c.h], 1e-5)
				}
			}
		})
	}
}

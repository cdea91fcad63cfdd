//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cuda/kernel"
)

// withRows34 runs f with $PROSCENIUM_GPU_MOE_ROWS's switches set (the
// B-row step's gate·up and down by kernels/moe_rows34.cu or the old kernels).
func withRows34(gateUp, down bool, f func() error) error {
	pg, pd := moeRows34GateUp, moeRows34Down
	moeRows34GateUp, moeRows34Down = gateUp, down
	defer func() { moeRows34GateUp, moeRows34Down = pg, pd }()
	return f()
}

// rows34IDs is one way n rows of k pairs choose among E experts:
// "random" (each row k distinct, rows sharing by chance), "same" (every row
// the same k, each in its own order: every expert shared by all rows),
// "disjoint" (no expert chosen twice: n·k distinct) and "half" (the first
// half of the rows the same k, the rest random).
func rows34IDs(r *rand.Rand, how string, n, k, E int) []int32 {
	var ids []int32
	same := distinctIDs(r, k, E)
	perm := r.Perm(E)
	for t := 0; t < n; t++ {
		switch {
		case how == "same" || how == "half" && t < (n+1)/2:
			row := slices.Clone(same)
			r.Shuffle(k, func(i, j int) { row[i], row[j] = row[j], row[i] })
			ids = append(ids, row...)
		case how == "disjoint":
			for j := 0; j < k; j++ {
				ids = append(ids, int32(perm[t*k+j]))
			}
		default:
			ids = append(ids, distinctIDs(r, k, E)...)
		}
	}
	return ids
}

// fp8Values is the 256 E4M3 codes' values (engine/checkpoint's decoding).
var fp8Values = func() [256]float64 {
	codes := make([]byte, 256)
	for i := range codes {
		codes[i] = byte(i)
	}
	v := checkpoint.DequantFP8Blocks(codes, 1, 256, []float32{1, 1}, 128)
	var out [256]float64
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}()

// fp8RowDot is Σ_c W[m][row, c]·x[c] in float64 for the FP8 matrices wq
// [E][rows, cols] with block scales sc (each weight its code's value times
// its block's scale, rounded to float32 as the checkpoint's dequantisation).
func fp8RowDot(wq []uint8, sc []float32, m, rows, cols, row int, x []float64) float64 {
	per, ns, scols := rows*cols, FP8ScaleCount(rows, cols), (cols+127)/128
	w := wq[m*per+row*cols : m*per+(row+1)*cols]
	s := sc[m*ns+(row/128)*scols:]
	var sum float64
	for c, b := range w {
		sum += float64(float32(fp8Values[b])*s[c/128]) * x[c]
	}
	return sum
}

func silu64(v float64) float64 { return v / (1 + math.Exp(-v)) }

// TestMoERows34MatchesOld: moe_rows34_gate_up and moe_rows34_down
// ($PROSCENIUM_GPU_MOE_ROWS) against the kernels they replace in a B-row
// step (moe_gate_up_ids_* and moe_down2, each held to the CPU by their own
// tests) and against a float64 reference on the host, under fast, at
// Drama 3's shapes (gate·up [1024, 2048], down [2048, 512] FP8, the shared
// expert [2048, 512] BF16 read from the stacked projection's odd-pitched
// rows), at 2, 3, 4, 5 and 8 rows whose experts are random, all the same
// (every pair of a tile read by several warps at once), all different, or
// half the same. The old kernels' bits are expected (the same chains of
// operations, the scaled chunk sums rounded before their adds); a
// difference is logged with its ULPs and held to 1e-5 of their values;
// the host reference within 1e-4.
func TestMoERows34MatchesOld(t *testing.T) {
	withFast(t) // rows34 is fast only
	testMoERows34MatchesOld(t)
}

func testMoERows34MatchesOld(t *testing.T) {
	r := newRand(t)
	const E, k, p, cols, h, is, eRoute = 72, 8, 512, 2048, 2048, 512, 256
	const rows, ip, dstride = 2 * p, p, eRoute + 2*is + 1
	// The experts: gate·up [1024, 2048] and down [2048, 512] FP8 each.
	guW, dnW := randFP8(r, E*rows*cols), randFP8(r, E*h*ip)
	scale := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(1e-3 * (1 + 9*r.Float64()))
			if i%7 == 3 {
				s[i] = float32(256 + 700*r.Float64()) // a large scale: the 2⁻¹²⁰ units' range
			}
		}
		return s
	}
	guS, dnS := scale(E*FP8ScaleCount(rows, cols)), scale(E*FP8ScaleCount(h, ip))
	guWb, guSb, dnWb, dnSb := upload(t, guW), upload(t, guS), upload(t, dnW), upload(t, dnS)
	wsF := randNonZero(r, h*is)
	wsH := bf16s(wsF)
	wsb := upload(t, wsH)
	for _, n := range []int{2, 3, 4, 5, 8} {
		for _, how := range []string{"random", "same", "disjoint", "half"} {
			t.Run(fmt.Sprintf("%s_%drows", how, n), func(t *testing.T) {
				nk := n * k
				ids := rows34IDs(r, how, n, k, E)
				idb := upload(t, ids)
				xs := randNonZero(r, n*cols)
				xb := upload(t, xs)
				// Gate·up: the old ids instance the step would run, then rows34.
				gateUp := func(new bool) []float32 {
					gu := poisoned(t, nk*rows)
					if err := dev.Run(func(q *Queue) error {
						if new {
							return q.MoERows34GateUp(gu, idb, guWb, guSb, 0, 0, n, k, rows, cols, xb, cols, 0)
						}
						g := q.backboneGemv(Gemv{Rows: rows, Cols: cols, N: nk, Ids: idb, Mats: E, XStride: cols}, true)
						if !idsGateUp(g.Variant, true, false) {
							return fmt.Errorf("no ids instance for %s", g.Variant.Name())
						}
						blocks, _ := g.Variant.Grid(rows)
						return kernel.MoEGateUpIdsFP8(q, kernel.MoEGateUpIdsFP8Kernel("moe_gate_up_ids_fp8_"+g.Variant.Name()),
							[3]int{blocks, nk, 1}, gemvThreads, kernel.MoEGateUpIdsFP8Args{Gu: devPtr(gu), Ids: devPtr(idb),
								W: devPtr(guWb), S: devPtr(guSb), Mstride: int64(rows * cols), Sstride: int64(FP8ScaleCount(rows, cols)),
								K: k, X: devPtr(xb), Xpitch: cols, Rows: rows, Cols: cols})
					}); err != nil {
						t.Fatal(err)
					}
					return download(t, gu, nk*rows)
				}
				worst := 0.0
				host := func(what string, got, ref []float32) {
					rel := finiteRelErr(t, what, got, ref)
					if !(rel <= 1e-4) {
						t.Fatalf("%s: relative error %.3g > 1e-4", what, rel)
					}
					worst = max(worst, rel)
				}
				defer func() {
					t.Logf("rows34 against the host: relative error %.3g (worst of the first and last rows' outputs)", worst)
				}()
				oldGU, newGU := gateUp(false), gateUp(true)
				rows34SameBits(t, "gate·up", newGU, oldGU)
				// The host's float64 values of the first and last rows' pairs.
				for _, tt := range []int{0, n - 1} {
					x := make([]float64, cols)
					for c := range x {
						x[c] = float64(xs[tt*cols+c])
					}
					for j := 0; j < k; j++ {
						q := tt*k + j
						ref := make([]float32, rows)
						for row := range ref {
							ref[row] = float32(fp8RowDot(guW, guS, int(ids[q]), rows, cols, row, x))
						}
						host(fmt.Sprintf("gate·up pair %d against the host", q), newGU[q*rows:(q+1)*rows], ref)
					}
				}
				// Down: gu random (silu·up of any values), the stacked projection's
				// rows D = E + 2·is + 1 floats apart (odd: unaligned rows).
				gus := randNonZero(r, nk*2*p)
				dense := randNonZero(r, n*dstride)
				gub, db := upload(t, gus), upload(t, dense)
				down := func(new bool) ([]float32, []float32) {
					yr, ys := poisoned(t, nk*h), poisoned(t, n*h)
					if err := dev.Run(func(q *Queue) error {
						if new {
							// Through MoEDownRows' switch (the step's call).
							return withRows34(false, true, func() error {
								return q.MoEDownRows(yr, ys, dnWb, dnSb, 0, 0, true, E, idb, gub, p, p, ip, k, wsb, db, dstride, eRoute, is, h, n, ExpertRef{})
							})
						}
						return q.MoEDown2Rows(yr, ys, dnWb, dnSb, 0, 0, true, E, idb, gub, p, p, ip, k, wsb, db, dstride, eRoute, is, h, n, ExpertRef{})
					}); err != nil {
						t.Fatal(err)
					}
					return download(t, yr, nk*h), download(t, ys, n*h)
				}
				oldR, oldS := down(false)
				newR, newS := down(true)
				rows34SameBits(t, "down routed", newR, oldR)
				rows34SameBits(t, "down shared", newS, oldS)
				for _, tt := range []int{0, n - 1} {
					for j := 0; j < k; j++ {
						q := tt*k + j
						x := make([]float64, ip)
						for c := range x {
							x[c] = silu64(float64(gus[q*2*p+c])) * float64(gus[q*2*p+p+c])
						}
						ref := make([]float32, h)
						for row := range ref {
							ref[row] = float32(fp8RowDot(dnW, dnS, int(ids[q]), h, ip, row, x))
						}
						host(fmt.Sprintf("down pair %d against the host", q), newR[q*h:(q+1)*h], ref)
					}
					x := make([]float64, is)
					for c := range x {
						x[c] = silu64(float64(dense[tt*dstride+eRoute+c])) * float64(dense[tt*dstride+eRoute+is+c])
					}
					ref := make([]float32, h)
					for row := range ref {
						var s float64
						for c := 0; c < is; c++ {
							s += float64(bf16ToFloat(wsH[row*is+c])) * x[c]
						}
						ref[row] = float32(s)
					}
					host(fmt.Sprintf("down shared row %d against the host", tt), newS[tt*h:(tt+1)*h], ref)
				}
			})
		}
	}
}

// TestMoERows34ExpertTable: both rows34 kernels read each pair's expert
// where an expert cache's table says (expert m elsewhere in memory, odd
// experts marked as host-read: the kernels mask the bit) and give the
// packed layout's bits, and the down kernel tallies each of the n·k pairs
// in the layer's statistics (a use, and a hit or a miss), as moe_down2.
func TestMoERows34ExpertTable(t *testing.T) {
	withFast(t)
	r := newRand(t)
	const E, k, n, p, cols, h, is, eRoute = 33, 8, 4, 512, 2048, 2048, 512, 256
	const rows, ip, dstride = 2 * p, p, eRoute + 2*is + 1
	scales := func(c int) []float32 {
		s := make([]float32, c)
		for i := range s {
			s[i] = float32(1e-3 * (1 + 9*r.Float64()))
		}
		return s
	}
	guW, guS := randFP8(r, E*rows*cols), scales(E*FP8ScaleCount(rows, cols))
	dnW, dnS := randFP8(r, E*h*ip), scales(E*FP8ScaleCount(h, ip))
	guT := tabledExperts(t, guW, guS, E, rows*cols, FP8ScaleCount(rows, cols))
	dnT := tabledExperts(t, dnW, dnS, E, h*ip, FP8ScaleCount(h, ip))
	stats := upload(t, make([]uint32, kernel.ExpertStatUses+E))
	dnT.Stats = devPtr(stats)
	guWb, guSb, dnWb, dnSb := upload(t, guW), upload(t, guS), upload(t, dnW), upload(t, dnS)
	ids := rows34IDs(r, "half", n, k, E)
	idb, xb := upload(t, ids), upload(t, randNonZero(r, n*cols))
	gub, db, wsb := upload(t, randNonZero(r, n*k*2*p)), upload(t, randNonZero(r, n*dstride)), upload(t, bf16s(randNonZero(r, h*is)))
	run := func(table bool) (gu, yr, ys []float32) {
		guo, yro, yso := poisoned(t, n*k*rows), poisoned(t, n*k*h), poisoned(t, n*h)
		var gt kernel.Ptr
		var dt ExpertRef
		if table {
			gt, dt = guT.gateUp(), dnT
		}
		if err := dev.Run(func(q *Queue) error {
			return firstErr(q.MoERows34GateUp(guo, idb, guWb, guSb, 0, 0, n, k, rows, cols, xb, cols, gt),
				q.MoERows34DownRows(yro, yso, dnWb, dnSb, 0, 0, true, E, idb, gub, p, p, ip, k, wsb, db, dstride, eRoute, is, h, n, dt))
		}); err != nil {
			t.Fatal(err)
		}
		return download(t, guo, n*k*rows), download(t, yro, n*k*h), download(t, yso, n*h)
	}
	pg, pr, ps := run(false)
	tg, tr, ts := run(true)
	for _, c := range []struct {
		what      string
		got, want []float32
	}{{"gate·up", tg, pg}, {"down routed", tr, pr}, {"down shared", ts, ps}} {
		if d, ulp := ULPDiff(c.got, c.want); d != 0 {
			t.Errorf("%s through the table: %d of %d values differ from the packed layout's (up to %d ULP)", c.what, d, len(c.want), ulp)
		}
	}
	got := make([]uint32, kernel.ExpertStatUses+E)
	if err := Download(dev, got, stats, 0); err != nil {
		t.Fatal(err)
	}
	want := make([]uint32, kernel.ExpertStatUses+E)
	for _, m := range ids {
		want[kernel.ExpertStatUses+int(m)]++
		want[map[bool]int{false: kernel.ExpertStatHits, true: kernel.ExpertStatMisses}[m%2 == 1]]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("statistics %v, want %v (hits, misses, uses)", got, want)
	}
}

// bf16ToFloat widens a BF16 value.
func bf16ToFloat(v uint16) float32 { return math.Float32frombits(uint32(v) << 16) }

// rows34SameBits holds rows34's outputs to the old kernel's: the same bits
// expected (the same chains of operations), a difference logged with its
// ULPs and held to 1e-5 of the old values.
func rows34SameBits(t *testing.T, what string, got, old []float32) {
	t.Helper()
	if d, ulp := ULPDiff(got, old); d == 0 {
		t.Logf("rows34 %s: %d values, the old kernel's bits", what, len(old))
	} else {
		t.Logf("rows34 %s: %d of %d values differ from the old kernel's bits, by up to %d ULP (held to 1e-5)", what, d, len(old), ulp)
		checkClose(t, "rows34 "+what, got, old, 1e-5)
	}
}

// TestMoERows34Route: the step's own call (MoEGateUpRoute with the B-row
// split) under $PROSCENIUM_GPU_MOE_ROWS=gateup writes the same ids and
// weights as without it and gate·up outputs within 1e-5 of the old
// instance's (the same bits expected), at Drama 3's gate·up shape, for
// rows whose logits are equal (every row the same experts) and random; one
// row keeps the routed launch (B = 1 unchanged: the same bits required).
func TestMoERows34Route(t *testing.T) {
	withFast(t)
	testMoERows34Route(t)
}

func testMoERows34Route(t *testing.T) {
	r := newRand(t)
	const E, k, rows, cols = 64, 8, 1024, 2048
	scales := make([]float32, E*FP8ScaleCount(rows, cols))
	for i := range scales {
		scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
	}
	W, S := upload(t, randFP8(r, E*rows*cols)), upload(t, scales)
	for _, c := range []struct {
		n    int
		same bool
	}{{4, true}, {4, false}, {8, false}, {2, true}, {1, false}} {
		t.Run(fmt.Sprintf("%drows_same_%v", c.n, c.same), func(t *testing.T) {
			dstride, xpitch := E+5, cols
			dense := randNonZero(r, c.n*dstride)
			for i := range dense {
				dense[i] *= 4
				if c.same && i >= dstride {
					dense[i] = dense[i%dstride] // row 0's logits: every row routes to its experts
				}
			}
			db, xb := upload(t, dense), upload(t, randNonZero(r, c.n*xpitch))
			nk := c.n * k
			run := func(on bool) gateUpRouted {
				ids, wts, gu := poisoned(t, nk), poisoned(t, nk), poisoned(t, nk*rows)
				if err := dev.Run(func(q *Queue) error {
					return withRows34(on, false, func() error {
						g := q.backboneGemv(Gemv{Rows: rows, Cols: cols, N: nk, Ids: ids, Mats: E, XStride: xpitch}, true)
						ok, err := q.MoEGateUpRoute(g, gu, ids, wts, db, c.n, dstride, E, k, W, S, xb, xpitch)
						if err == nil && !ok {
							err = fmt.Errorf("no instance for %s", g.Variant.Name())
						}
						return err
					})
				}); err != nil {
					t.Fatal(err)
				}
				v := gateUpRouted{ids: make([]int32, nk), wts: download(t, wts, nk), gu: download(t, gu, nk*rows)}
				if err := Download(dev, v.ids, ids, 0); err != nil {
					t.Fatal(err)
				}
				return v
			}
			old, got := run(false), run(true)
			if !slices.Equal(got.ids, old.ids) {
				t.Fatalf("ids %v, without rows34 %v", got.ids, old.ids)
			}
			if d, _ := ULPDiff(got.wts, old.wts); d != 0 {
				t.Fatalf("weights: %d of %d differ", d, nk)
			}
			if c.n == 1 {
				if d, ulp := ULPDiff(got.gu, old.gu); d != 0 {
					t.Fatalf("one row: %d of %d gate·up values differ (up to %d ULP): B = 1 must not change", d, len(old.gu), ulp)
				}
				return
			}
			rows34SameBits(t, "routed gate·up", got.gu, old.gu)
		})
	}
}

// TestMoERows34Timing prints the device time of the B-row step's two
// routed-expert launches, old (moe_gate_up_ids_* and moe_down2) against
// rows34, at Drama 3's geometry (256 experts, top 8, gate·up [1024, 2048]
// and down [2048, 512] FP8, the shared expert [2048, 512] BF16) for 2, 4
// and 8 rows: the mean of reps launches stream-ordered with PDL, each
// launch's rows routed to other experts (the weights from memory after the
// first pass over the 768 MB), and the distinct experts' bytes over that
// time. Nothing is asserted.
func TestMoERows34Timing(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	withFast(t)
	{
		r := newRand(t)
		const reps, E, k, p, cols, h, is = 40, 256, 8, 512, 2048, 2048, 512
		const rows, ip, dstride = 2 * p, p, E + 2*is + 1
		ones := func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = 1e-3
			}
			return s
		}
		guW, guS := upload(t, tiled(randFP8(r, 1<<20), E*rows*cols)), upload(t, ones(E*FP8ScaleCount(rows, cols)))
		dnW, dnS := upload(t, tiled(randFP8(r, 1<<20), E*h*ip)), upload(t, ones(E*FP8ScaleCount(h, ip)))
		Ws := upload(t, bf16s(randNonZero(r, h*is)))
		const maxN = 8
		x, gu := upload(t, randNonZero(r, maxN*cols)), upload(t, randNonZero(r, maxN*k*2*p))
		dense := upload(t, randNonZero(r, maxN*dstride))
		var ids []int32
		for i := 0; i < reps*maxN; i++ {
			ids = append(ids, distinctIDs(r, k, E)...)
		}
		idb := upload(t, ids)
		guOut, yr, ys := alloc(t, maxN*k*rows*4), alloc(t, maxN*k*h*4), alloc(t, maxN*h*4)
		for _, n := range []int{2, 4, 8} {
			nk := n * k
			// The distinct experts a launch reads, on average over the reps.
			distinct := 0
			for i := 0; i < reps; i++ {
				seen := map[int32]bool{}
				for _, id := range ids[i*maxN*k : i*maxN*k+nk] {
					seen[id] = true
				}
				distinct += len(seen)
			}
			dist := float64(distinct) / reps
			for _, part := range []string{"gate·up", "down"} {
				for _, on := range []bool{false, true} {
					run := func(q *Queue) error {
						for i := 0; i < reps; i++ {
							ib := &Block{Kind: idb.Kind, Ptr: idb.Ptr + uintptr(i*maxN*k*4), Bytes: int64(nk * 4)}
							var err error
							switch {
							case part == "down" && on:
								err = q.MoERows34DownRows(yr, ys, dnW, dnS, 0, 0, true, E, ib, gu, p, p, ip, k, Ws, dense, dstride, E, is, h, n, ExpertRef{})
							case part == "down":
								err = q.MoEDown2Rows(yr, ys, dnW, dnS, 0, 0, true, E, ib, gu, p, p, ip, k, Ws, dense, dstride, E, is, h, n, ExpertRef{})
							case on:
								err = q.MoERows34GateUp(guOut, ib, guW, guS, 0, 0, n, k, rows, cols, x, cols, 0)
							default:
								g := q.backboneGemv(Gemv{Rows: rows, Cols: cols, N: nk, Ids: ib, Mats: E, XStride: cols}, true)
								blocks, _ := g.Variant.Grid(rows)
								err = kernel.MoEGateUpIdsFP8(q, kernel.MoEGateUpIdsFP8Kernel("moe_gate_up_ids_fp8_"+g.Variant.Name()),
									[3]int{blocks, nk, 1}, gemvThreads, kernel.MoEGateUpIdsFP8Args{Gu: devPtr(guOut), Ids: devPtr(ib),
										W: devPtr(guW), S: devPtr(guS), Mstride: int64(rows * cols), Sstride: int64(FP8ScaleCount(rows, cols)),
										K: k, X: devPtr(x), Xpitch: cols, Rows: rows, Cols: cols})
							}
							if err != nil {
								return err
							}
						}
						return nil
					}
					if err := dev.Run(run); err != nil { // warm-up
						t.Fatal(err)
					}
					ms, err := dev.Time(run)
					if err != nil {
						t.Fatal(err)
					}
					us := 1000 * ms / reps
					mb := dist * float64(rows*cols) / 1e6
					if part == "down" {
						mb = dist*float64(h*ip)/1e6 + float64(h*is*2)/1e6
					}
					name := map[bool]string{false: "old", true: "rows34"}[on]
					fmt.Printf("timing rows34 %-7s %-6s %d rows (%4.1f distinct experts, %5.1f MB)  %7.2f µs  %5.2f TB/s\n",
						part, name, n, dist, mb, us, mb/us)
				}
			}
		}
	}
}

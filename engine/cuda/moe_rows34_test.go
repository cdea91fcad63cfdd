package cuda

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// A host emulation of kernels/moe_rows34.cu's index arithmetic (no GPU
// here): each warp's items and steps, the ring's stages and cp.async
// groups, the addresses a lane copies and the ones it sums, the x swizzle,
// the down kernel's inputs in flight across items, and where each output
// is written. It follows the kernels' code statement by statement; a wrong
// tile, chunk, scale, stage, group count or input row fails it.

// r34Emu is one emulated launch's bookkeeping.
type r34Emu struct {
	t       *testing.T
	written map[[3]int]int // (buffer, vector, row) → writes
	sums    map[[3]int]int // (buffer, vector, row) → chunks summed
}

func (e *r34Emu) fail(f string, a ...any) { e.t.Helper(); e.t.Fatalf(f, a...) }

// r34Copy is what one lane's step copied into a stage: the matrix (expert,
// or -1 for the shared one), its 4 rows' first row and the chunk, the scale
// (block row, block column) and the step and group it belongs to.
type r34Copy struct {
	m, row0, chunk, srow, scol, step, group int
}

// r34Xswz is kernels/moe_rows34.cu r34_xswz.
func r34Xswz(c, f int) int { return 4*c + (f ^ ((c >> 1) & 3)) }

const (
	emuS    = kernel.R34Stages
	emuWarp = kernel.R34Warps
)

// emuGateUp emulates moe_rows34_gate_up on a grid of grid blocks, with
// 8-row items where tile8 is 1.
func emuGateUp(t *testing.T, ids []int, n, k, rows, grid, tile8 int) {
	cols := kernel.R34GuCols
	tileRows := kernel.R34GuTile
	if tile8 != 0 {
		tileRows = 8
	}
	C := cols / 512
	SPI := (tileRows / 4) * C
	if lg := 4 - tile8; SPI != 1<<lg { // the kernel's s & (SPI − 1), s >> lgSPI
		t.Fatalf("gate·up: %d steps an item, the kernel's shift %d", SPI, lg)
	}
	nk := n * k
	e := &r34Emu{t: t, written: map[[3]int]int{}, sums: map[[3]int]int{}}
	// x staging: every float4 of the n rows lands at a distinct swizzled slot
	// of its own row, the one the sums read back.
	xslot := map[int]int{} // staged float4 index → source float4 (t·cols/4 + f4)
	for v := 0; v < n*(cols/4); v++ {
		tt, f4 := v/(cols/4), v%(cols/4)
		dst := tt*cols/4 + r34Xswz(f4>>2, f4&3)
		if _, dup := xslot[dst]; dup {
			t.Fatalf("x staging: slot %d written twice", dst)
		}
		xslot[dst] = tt*cols/4 + f4
	}
	items := (rows / tileRows) * nk
	TW := grid * emuWarp
	for gw := 0; gw < TW; gw++ {
		steps := 0
		if gw < items {
			steps = ((items-1-gw)/TW + 1) * SPI
		}
		for lane := 0; lane < 32; lane++ {
			var ring [emuS]*r34Copy
			groups := 1 // x's group
			var im, itile int
			issue := func(s int) {
				if s < steps {
					st := s % SPI
					if st == 0 {
						it := gw + (s/SPI)*TW
						tile := it / nk
						q := it - tile*nk
						im, itile = ids[q], tile
					}
					rg, u := st/C, st%C
					chunk := lane + 32*u
					row0 := itile*tileRows + rg*4
					// The kernel's byte arithmetic: the lane's slot lring = ring + lane·16,
					// d = lring + stage·STAGE_BYTES; rows at d + r·512; the scale at
					// d − lane·12 + STAGE_W; the source iw + rg·4·cols + u·512 + r·cols with
					// iw = matrix + tile·16·cols + lane·16.
					stage := (s % emuS) * kernel.R34StageBytes
					d := lane*16 + stage
					iw := itile*tileRows*cols + lane*16
					for r := 0; r < 4; r++ {
						if dst, src := d+r*32*16, iw+rg*4*cols+u*512+r*cols; dst != stage+(r*32+lane)*16 || src != (row0+r)*cols+chunk*16 {
							e.fail("gate·up lane %d step %d row %d: copies byte %d to slot byte %d", lane, s, r, src, dst)
						}
					}
					if d-lane*12+kernel.R34StageW != stage+kernel.R34StageW+lane*4 {
						e.fail("gate·up lane %d: scale slot", lane)
					}
					ring[s%emuS] = &r34Copy{m: im, row0: row0, chunk: chunk, srow: (itile * tileRows) >> 7, scol: chunk >> 3, step: s, group: groups}
				}
				groups++
			}
			for s := 0; s < emuS-1; s++ {
				issue(s)
			}
			if groups-(emuS-1) < 1 {
				e.fail("gate·up: x's group not complete at the barrier")
			}
			var q, tt, row0 int
			for s := 0; s < steps; s++ {
				st := s % SPI
				if st == 0 {
					it := gw + (s/SPI)*TW
					tile := it / nk
					q = it - tile*nk
					tt = q / k
					row0 = tile * tileRows
				}
				issue(s + emuS - 1)
				done := groups - (emuS - 1) // groups complete after wait_group(S−1)
				c := ring[s%emuS]
				if c == nil || c.step != s || c.group >= done {
					e.fail("gate·up warp %d lane %d step %d: stage holds %+v, %d groups complete", gw, lane, s, c, done)
				}
				u := st % C
				chunk := lane + 32*u
				rg := st / C
				if c.m != ids[q] || c.chunk != chunk || c.row0 != row0+rg*4 || c.srow != c.row0>>7 || c.scol != chunk*16/128 {
					e.fail("gate·up warp %d lane %d step %d: copied %+v, sums pair %d (expert %d) rows %d… chunk %d", gw, lane, s, c, q, ids[q], row0+rg*4, chunk)
				}
				for f := 0; f < 4; f++ {
					if src := xslot[tt*cols/4+r34Xswz(chunk, f)]; src != tt*cols/4+4*chunk+f {
						e.fail("gate·up: x float4 %d of chunk %d reads staged source %d", f, chunk, src)
					}
				}
				for r := 0; r < 4; r++ {
					e.sums[[3]int{0, q, c.row0 + r}]++
				}
				if u == C-1 && lane == 0 {
					for r := 0; r < 4; r++ {
						e.written[[3]int{0, q, row0 + rg*4 + r}]++
					}
				}
			}
		}
	}
	for q := 0; q < nk; q++ {
		for row := 0; row < rows; row++ {
			key := [3]int{0, q, row}
			if e.written[key] != 1 || e.sums[key] != cols/16 {
				t.Fatalf("gate·up pair %d row %d: written %d times, %d chunks summed (want 1, %d)", q, row, e.written[key], e.sums[key], cols/16)
			}
		}
	}
	if len(e.written) != nk*rows {
		t.Fatalf("gate·up: %d outputs written, want %d", len(e.written), nk*rows)
	}
}

// emuDown emulates moe_rows34_down on a grid of grid blocks.
func emuDown(t *testing.T, ids []int, n, k, h, grid int) {
	cols := kernel.R34DownCols
	const SPI = 4
	nk := n * k
	e := &r34Emu{t: t, written: map[[3]int]int{}, sums: map[[3]int]int{}}
	NR := (h / kernel.R34DownTile) * nk
	items := NR + (h/kernel.R34SharedTile)*n
	TW := grid * emuWarp
	for gw := 0; gw < TW; gw++ {
		steps := 0
		if gw < items {
			steps = ((items-1-gw)/TW + 1) * SPI
		}
		for lane := 0; lane < 32; lane++ {
			var ring [emuS]*r34Copy
			groups := 0
			var im, ibase int // the issue cursor: matrix (−1 shared) and its tile's first row
			var ibf bool
			var pending [16]int // input column c's source: vector·1e4 + column (routed q, shared 1000+t)
			issue := func(s int) {
				if s < steps {
					st := s % SPI
					if st == 0 {
						it := gw + (s/SPI)*TW
						if it < NR {
							tile := it / nk
							q := it - tile*nk
							im, ibase, ibf = ids[q], tile*kernel.R34DownTile, false
							for c := 0; c < 16; c++ {
								pending[c] = q*10000 + 16*lane + c
							}
						} else {
							j := it - NR
							tile := j / n
							tt := j - tile*n
							im, ibase, ibf = -1, tile*kernel.R34SharedTile, true
							for c := 0; c < 16; c++ {
								pending[c] = (1000+tt)*10000 + (c>>3)*256 + 8*lane + (c & 7)
							}
						}
					}
					if ibf {
						ring[s%emuS] = &r34Copy{m: -1, row0: ibase + (st>>1)*4, chunk: lane + 32*(st&1), step: s, group: groups}
					} else {
						ring[s%emuS] = &r34Copy{m: im, row0: ibase + st*4, chunk: lane, srow: ibase >> 7, scol: lane >> 3, step: s, group: groups}
					}
				}
				groups++
			}
			for s := 0; s < emuS-1; s++ {
				issue(s)
			}
			var bf bool
			var vec, base int
			var xv [16]int
			for s := 0; s < steps; s++ {
				st := s % SPI
				if st == 0 {
					it := gw + (s/SPI)*TW
					bf = it >= NR
					if !bf {
						tile := it / nk
						q := it - tile*nk
						vec, base = q, tile*kernel.R34DownTile
						for c := 0; c < 16; c++ {
							if pending[c] != q*10000+16*lane+c {
								e.fail("down warp %d lane %d item %d: input %d from %d, want pair %d column %d", gw, lane, it, c, pending[c], q, 16*lane+c)
							}
						}
					} else {
						j := it - NR
						tile := j / n
						tt := j - tile*n
						vec, base = 1000+tt, tile*kernel.R34SharedTile
						for c := 0; c < 16; c++ {
							if pending[c] != (1000+tt)*10000+(c>>3)*256+8*lane+(c&7) {
								e.fail("down warp %d lane %d shared item %d: input %d from %d", gw, lane, it, c, pending[c])
							}
						}
					}
					xv = pending
				}
				issue(s + emuS - 1)
				done := groups - (emuS - 1)
				c := ring[s%emuS]
				if c == nil || c.step != s || c.group >= done {
					e.fail("down warp %d lane %d step %d: stage holds %+v, %d groups complete", gw, lane, s, c, done)
				}
				var r0 int
				var finished bool
				if bf {
					hi := st & 1
					chunk := lane + 32*hi
					if c.m != -1 || c.chunk != chunk || c.row0 != base+(st>>1)*4 {
						e.fail("down shared warp %d lane %d step %d: copied %+v", gw, lane, s, c)
					}
					// xb = hi ? (xv[2], xv[3]) : (xv[0], xv[1]): values 8·hi … 8·hi+7.
					for f := 0; f < 8; f++ {
						if got, want := xv[8*hi+f]%10000, chunk*8+f; got != want {
							e.fail("down shared: weight %d of chunk %d against input column %d", f, chunk, got)
						}
					}
					for r := 0; r < 4; r++ {
						e.sums[[3]int{2, vec, c.row0 + r}]++
					}
					finished, r0 = hi == 1, (st>>1)*4
				} else {
					if c.m != ids[vec] || c.chunk != lane || c.row0 != base+st*4 || c.srow != c.row0>>7 || c.scol != lane*16/128 {
						e.fail("down warp %d lane %d step %d: copied %+v for pair %d (expert %d) rows %d…", gw, lane, s, c, vec, ids[vec], base+st*4)
					}
					for f := 0; f < 16; f++ {
						if got := xv[f] % 10000; got != lane*16+f {
							e.fail("down: weight %d of chunk %d against input column %d", f, lane, got)
						}
					}
					for r := 0; r < 4; r++ {
						e.sums[[3]int{1, vec, c.row0 + r}]++
					}
					finished, r0 = true, st*4
				}
				if finished && lane == 0 {
					buf := 1
					if bf {
						buf = 2
					}
					for r := 0; r < 4; r++ {
						e.written[[3]int{buf, vec, base + r0 + r}]++
					}
				}
			}
		}
	}
	for q := 0; q < nk; q++ {
		for row := 0; row < h; row++ {
			if key := [3]int{1, q, row}; e.written[key] != 1 || e.sums[key] != cols/16 {
				t.Fatalf("down pair %d row %d: written %d times, %d chunks summed", q, row, e.written[key], e.sums[key])
			}
		}
	}
	for tt := 0; tt < n; tt++ {
		for row := 0; row < h; row++ {
			if key := [3]int{2, 1000 + tt, row}; e.written[key] != 1 || e.sums[key] != cols/8 {
				t.Fatalf("down shared row %d output %d: written %d times, %d chunks summed", tt, row, e.written[key], e.sums[key])
			}
		}
	}
	if len(e.written) != (nk+n)*h {
		t.Fatalf("down: %d outputs written, want %d", len(e.written), (nk+n)*h)
	}
}

// TestRows34IndexEmulation runs the emulation at Drama 3's shapes for 2…8
// rows (random, shared and disjoint experts) on the H200's 132 blocks and
// on odd grids (a warp's items then straddle more or fewer rounds).
func TestRows34IndexEmulation(t *testing.T) {
	r := rand.New(rand.NewPCG(34, 34))
	for _, grid := range []int{132, 7, 1} {
		for _, n := range []int{2, 3, 4, 8} {
			t.Run(fmt.Sprintf("grid%d_rows%d", grid, n), func(t *testing.T) {
				const k, E = 8, 256
				ids := make([]int, 0, n*k)
				for tt := 0; tt < n; tt++ {
					p := r.Perm(E)[:k]
					if tt%2 == 1 {
						p = ids[:k] // every other row the first row's experts
					}
					ids = append(ids, p...)
				}
				emuGateUp(t, ids, n, k, 1024, grid, 0)
				emuGateUp(t, ids, n, k, 1024, grid, 1)
				emuGateUp(t, ids, n, k, 1024, grid, rows34Tile8(1024, n*k, grid*kernel.R34Warps))
				emuDown(t, ids, n, k, 2048, grid)
			})
		}
	}
}

// TestRows34XSwizzleConflictFree: a quarter warp's 16-byte reads of float4 f
// of consecutive chunks (64 bytes apart) fall in 8 different bank groups.
func TestRows34XSwizzleConflictFree(t *testing.T) {
	for u := 0; u < 4; u++ {
		for f := 0; f < 4; f++ {
			for q0 := 0; q0 < 32; q0 += 8 {
				seen := map[int]bool{}
				for lane := q0; lane < q0+8; lane++ {
					g := r34Xswz(lane+32*u, f) % 8 // 16-byte units mod 128 bytes
					if seen[g] {
						t.Fatalf("chunk step %d float4 %d: lanes %d… share bank group %d", u, f, q0, g)
					}
					seen[g] = true
				}
			}
		}
	}
}

// TestRows34Modes: $PROSCENIUM_GPU_MOE_ROWS's values.
func TestRows34Modes(t *testing.T) {
	for _, c := range []struct {
		v, def   string
		gu, down bool
	}{{"", "0", false, false}, {"", "1", true, true}, {"1", "0", true, true}, {"gateup", "0", true, false},
		{"down", "0", false, true}, {"0", "1", false, false}, {"off", "1", false, false}} {
		if gu, down := rows34Modes(c.v, c.def); gu != c.gu || down != c.down {
			t.Errorf("rows34Modes(%q, %q) = %v, %v", c.v, c.def, gu, down)
		}
	}
	if gu, down := rows34Modes("", moeRows34Default); gu || down {
		t.Errorf("rows34 on by default before its device run")
	}
	if !rows34GateUpFits(4, 8, 1024, 2048, 2048) || rows34GateUpFits(1, 8, 1024, 2048, 2048) || rows34GateUpFits(9, 8, 1024, 2048, 2048) {
		t.Errorf("rows34GateUpFits: Drama 3's B = 4 in, B = 1 and n·k > 64 out")
	}
	if !rows34DownFits(4, 8, 2048, 512, 512, 512, 512) || rows34DownFits(4, 8, 2048, 512, 512, 520, 512) {
		t.Errorf("rows34DownFits")
	}
	for _, c := range []struct{ n, want int }{{2, 1}, {3, 1}, {4, 0}, {8, 0}} {
		if got := rows34Tile8(1024, 8*c.n, 132*kernel.R34Warps); got != c.want {
			t.Errorf("rows34Tile8 at B = %d: %d, want %d", c.n, got, c.want)
		}
	}
}

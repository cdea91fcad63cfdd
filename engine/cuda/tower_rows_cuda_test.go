//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// Several takes' frames in one pass (Tower.FrameRows) against each take made
// alone (Tower.Frame on a tower of one slot), which TestTowerFrames holds to
// the CPU: every code, every logits vector and every feedback row must be
// the same bits. The kernels that take B rows (gemv_rows_*, tower_gate_up_
// swiglu_rows, tower_attend_rope_takes, the draws and norms by row) have the
// one-row kernels as their reference here.

// towerTake is one take of the comparison: its settings, seed, prompt and
// the backbone rows of its frames; forced frames teacher-force codes.
type towerTake struct {
	settings sampling.Settings
	seed     uint64
	prompt   []float32 // [rows, Dim]
	hidden   [][]float32
	forced   [][]int // per frame; nil: drawn
}

// towerFrameOut is what one frame of one take left: codes, end flag and
// errors, every logits vector, the feedback row.
type towerFrameOut struct {
	res      FrameResult
	logits   [][]float32
	feedback []float32
}

func TestTowerFrameRows(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  *drama3.Config
	}{{"demo", drama3.TinyConfig()}, {"odd", drama3.TinyOddConfig()}} {
		eachNumerics(t, func(t *testing.T) {
			for _, takes := range []int{2, 4, TowerMaxTakes} {
				t.Run(fmt.Sprintf("%s/%d", c.name, takes), func(t *testing.T) { testTowerFrameRows(t, c.cfg, takes, nil, nil, false) })
			}
			// Each launch sequence of the frame (gate·up fused or not).
			for _, f := range towerFusionVariants {
				t.Run(fmt.Sprintf("%s/3/%s", c.name, f), func(t *testing.T) { testTowerFrameRows(t, c.cfg, 3, &f, nil, false) })
			}
			// The rows' attention on the _h128 instances at three rows with
			// 64 rows a split (the rule takes 128: towerAttn), one split, and
			// eight rows a split (several, merged).
			t.Run(fmt.Sprintf("%s/3/attn-few", c.name), func(t *testing.T) {
				t.Setenv("PROSCENIUM_GPU_TOWER_ATTN", "few")
				testTowerFrameRows(t, c.cfg, 3, nil, nil, false)
			})
			t.Run(fmt.Sprintf("%s/3/attn-keys-8", c.name), func(t *testing.T) {
				t.Setenv("PROSCENIUM_GPU_TOWER_ATTN", "8")
				testTowerFrameRows(t, c.cfg, 3, nil, nil, false)
			})
			// Under fast the rule's widths of four and eight take other
			// instances than one row, so those compare within 1e-5: the
			// wide instances at every width keep eight rows to their bits.
			if !dev.Numerics.Exact() {
				t.Run(fmt.Sprintf("%s/%d/attn-wide", c.name, TowerMaxTakes), func(t *testing.T) {
					t.Setenv("PROSCENIUM_GPU_TOWER_ATTN", "wide")
					testTowerFrameRows(t, c.cfg, TowerMaxTakes, nil, nil, false)
				})
			}
			// The B-row instances with a row's two chunks in flight at once
			// (gate·up's rows2u2 from 3 takes on; the tiny towers' other
			// projections split rows over 32 threads and keep their own).
			u2 := GemvVariant{TPR: 128, Rows: 4, Unroll: 2}
			t.Run(fmt.Sprintf("%s/4/%s", c.name, u2.Name()), func(t *testing.T) { testTowerFrameRows(t, c.cfg, 4, nil, &u2, false) })
			// The gate·up on the tensor cores (fast only; the demo tower's
			// 64 columns are the kernel's multiple of 32).
			if !dev.Numerics.Exact() && c.name == "demo" {
				t.Run(fmt.Sprintf("%s/4/mma", c.name), func(t *testing.T) { testTowerFrameRows(t, c.cfg, 4, nil, nil, true) })
			}
		})
	}
}

// testTowerFrameRows makes takes takes of different settings, seeds and
// prompt lengths alone and then together (frames of live slots 0…n−1; n
// shrinks when the last take ends early), comparing every frame; fuse and
// rowsGemv, when not nil, are the towers' launch sequence and B-row GEMV
// instance (SetRowsGemv). With mma the frames of several rows put their
// gate·up on the tensor cores (towerGateUpMMA), whose sums are not the
// one-row kernel's: every take is teacher-forced (so each frame's inputs are
// those it had alone) and the logits are held within 1e-5 of their values
// alone instead of to their bits. The same holds, mma or not, where the
// attention's rule (towerAttn) sums a row's keys in another order at some
// width than at one row (under fast: the wide instances at one and two
// rows, the _h128 ones from three).
func testTowerFrameRows(t *testing.T, cfg *drama3.Config, takes int, fuse *towerFusion, rowsGemv *GemvVariant, mma bool) {
	const frames = 14
	r := newRand(t)
	f := newTowerFixture(t, r, cfg)
	g := f.g
	nearOnly := mma || attnOrderByWidth(t, takes, g.HeadDim)
	D, ncb := g.Dim, len(g.Entries)
	settings := []sampling.Settings{
		{Temperature: 0.7, TopP: 0.9, TopK: 30}, // the warp selection and draw
		{TopP: 1},                               // greedy
		{Temperature: 1, TopP: 1},               // whole-vocabulary sorts
		{Temperature: 0.9, TopP: 0.8},           // top-p alone
	}
	tk := make([]towerTake, takes)
	for s := range tk {
		x := &tk[s]
		x.settings, x.seed = settings[s%len(settings)], r.Uint64()
		x.prompt = randNonZero(r, (3+20*s)*D) // different positions per take; from 4 takes, caches past 64 rows (the attention's second split)
		for fi := 0; fi < frames; fi++ {
			x.hidden = append(x.hidden, randNonZero(r, D))
			var codes []int
			if s == 1 && fi < 4 || nearOnly { // take 1 teacher-forced at first
				codes = make([]int, ncb)
				for i := range codes {
					codes[i] = r.IntN(g.Entries[i])
				}
			}
			x.forced = append(x.forced, codes)
		}
	}
	// The last take (of several) stops after half the frames: the others
	// go on at n − 1 rows.
	stop := func(s int) int {
		if s == takes-1 {
			return frames / 2
		}
		return frames
	}
	maxRows := 3 + 20*takes + frames + 2
	setup := func(tw *Tower) {
		if fuse != nil {
			tw.fuse = *fuse
		}
		tw.rowsGemv = rowsGemv
		if mma {
			tw.gateUpMMA = towerGateUpMMA{from: 2, anyShape: true}
			if !tw.gateUpRowsOnMMA(2, false) {
				t.Fatalf("a %d × %d gate·up cannot run on the tensor cores", g.FFN, D)
			}
		}
	}
	readFrame := func(tw *Tower, res FrameResult) towerFrameOut {
		out := towerFrameOut{res: res, feedback: download(t, tw.FeedbackRow(), D)}
		out.logits = append(out.logits, download(t, tw.SemanticLogits(), g.Entries[0]+1))
		for j := 1; j < ncb; j++ {
			out.logits = append(out.logits, download(t, tw.ResidualLogits(j), g.Entries[j]))
		}
		return out
	}

	// Alone: each take on a tower of one slot, frame by frame.
	alone := make([][]towerFrameOut, takes)
	for s := range tk {
		tw, err := NewTower(dev, &f.dev, TowerOptions{MaxRows: maxRows, PrefillChunk: 5})
		if err != nil {
			t.Fatal(err)
		}
		setup(tw)
		x := &tk[s]
		prompt := upload(t, x.prompt)
		hidden := alloc(t, D*4)
		if err := tw.Begin(x.settings, x.seed); err != nil {
			t.Fatal(err)
		}
		if err := dev.Run(func(q *Queue) error { return tw.Prefill(q, Whole(prompt), len(x.prompt)/D) }); err != nil {
			t.Fatal(err)
		}
		for fi := 0; fi < stop(s); fi++ {
			if err := firstErr(Upload(dev, hidden, 0, x.hidden[fi]), tw.Force(x.forced[fi])); err != nil {
				t.Fatal(err)
			}
			if err := dev.Run(func(q *Queue) error { return tw.Frame(q, Whole(hidden)) }); err != nil {
				t.Fatal(err)
			}
			res, err := tw.Result()
			if err != nil {
				t.Fatal(err)
			}
			if err := res.Err(); err != nil {
				t.Fatalf("take %d alone, frame %d: %v", s, fi, err)
			}
			alone[s] = append(alone[s], readFrame(tw, res))
		}
		tw.Close()
	}

	// Together: one tower of takes slots, each prefilled through its slot,
	// then one captured frame graph per live count.
	tw, err := NewTower(dev, &f.dev, TowerOptions{MaxRows: maxRows, PrefillChunk: 5, Takes: takes})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	setup(tw)
	for s := range tk {
		x := &tk[s]
		prompt := upload(t, x.prompt)
		slot := tw.Slot(s)
		if err := slot.Begin(x.settings, x.seed); err != nil {
			t.Fatal(err)
		}
		if err := dev.Run(func(q *Queue) error { return slot.Prefill(q, Whole(prompt), len(x.prompt)/D) }); err != nil {
			t.Fatal(err)
		}
	}
	hidden := alloc(t, takes*D*4)
	slotMap := alloc(t, takes*4)
	pinned, err := dev.AllocPinned(FrameRowsResultBytes(takes))
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(pinned)
	graphs := map[int]*Graph{}
	defer dev.Run(func(*Queue) error {
		for _, g := range graphs {
			g.Destroy()
		}
		return nil
	})
	// Each step names the takes not done in a shuffled row order, and from
	// the third step on one of them sits a step out now and then (the
	// scheduler steps the takes whose callers are ready): a take's frames
	// must not depend on its row, its slot's neighbours or the steps it
	// missed. The first steps keep rows = slots (the slot map's identity).
	done := make([]int, takes)
	for step := 0; ; step++ {
		var rowSlots []int
		for s := range tk {
			if done[s] < stop(s) {
				rowSlots = append(rowSlots, s)
			}
		}
		if len(rowSlots) == 0 {
			break
		}
		if step >= 2 {
			r.Shuffle(len(rowSlots), func(i, j int) { rowSlots[i], rowSlots[j] = rowSlots[j], rowSlots[i] })
			if len(rowSlots) > 1 && step%3 == 0 {
				rowSlots = rowSlots[1:]
			}
		}
		n := len(rowSlots)
		rows := make([]float32, 0, n*D)
		ids := make([]int32, n)
		for i, s := range rowSlots {
			rows = append(rows, tk[s].hidden[done[s]]...)
			ids[i] = int32(s)
			if err := tw.Slot(s).Force(tk[s].forced[done[s]]); err != nil {
				t.Fatal(err)
			}
		}
		if err := firstErr(Upload(dev, hidden, 0, rows), Upload(dev, slotMap, 0, ids)); err != nil {
			t.Fatal(err)
		}
		// Scratch and logits poisoned: a row a launch fails to write shows
		// (the feedback rows are the takes' state: a take's next frame
		// differs from its last).
		for _, blk := range append([]*Block{tw.semantic, tw.cat, tw.x, tw.normed, tw.h, tw.qkv, tw.attn, tw.mixed, tw.gate}, tw.residual...) {
			if err := dev.Fill32(blk, nanBits); err != nil {
				t.Fatal(err)
			}
		}
		if err := dev.Run(func(q *Queue) error {
			if graphs[n] == nil {
				gr, err := q.Capture(func(q *Queue) error {
					return firstErr(tw.FrameRows(q, Whole(hidden), n, Whole(slotMap)), tw.CopyResultRows(q, pinned))
				})
				if err != nil {
					return err
				}
				graphs[n] = gr
			}
			return q.LaunchGraph(graphs[n])
		}); err != nil {
			t.Fatal(err)
		}
		if err := dev.Sync(); err != nil {
			t.Fatal(err)
		}
		for i, s := range rowSlots {
			fi := done[s]
			slot := tw.Slot(s)
			res, err := slot.Result()
			if err != nil {
				t.Fatal(err)
			}
			if pr := tw.ReadResultRow(pinned, s); fmt.Sprint(pr) != fmt.Sprint(res) {
				t.Fatalf("step %d take %d: pinned result %+v, control block %+v", step, s, pr, res)
			}
			want := alone[s][fi]
			if fmt.Sprint(res) != fmt.Sprint(want.res) {
				t.Fatalf("frame %d take %d (row %d of %d): result %+v, alone %+v", fi, s, i, n, res, want.res)
			}
			same := requireSameBits
			if nearOnly {
				same = func(t *testing.T, what string, got, want []float32) { checkCloseQuiet(t, what, got, want, 1e-5) }
			}
			same(t, fmt.Sprintf("frame %d take %d semantic logits", fi, s),
				download(t, tw.semantic, n*(g.Entries[0]+1))[i*(g.Entries[0]+1):(i+1)*(g.Entries[0]+1)], want.logits[0])
			for j := 1; j < ncb; j++ {
				same(t, fmt.Sprintf("frame %d take %d codebook %d logits", fi, s, j),
					download(t, tw.residual[j-1], n*g.Entries[j])[i*g.Entries[j]:(i+1)*g.Entries[j]], want.logits[j])
			}
			requireSameBits(t, fmt.Sprintf("frame %d take %d feedback row", fi, s), download(t, slot.FeedbackRow(), D), want.feedback)
			done[s]++
		}
	}
	if nearOnly {
		t.Logf("%d takes, %d frames each at most, teacher-forced: every code and feedback value the same as alone, every logit vector within 1e-5", takes, frames)
		return
	}
	t.Logf("%d takes, %d frames each at most: every code, logit and feedback value the same as alone", takes, frames)
}

// attnOrderByWidth says whether the tower attention's instances as
// $PROSCENIUM_GPU_TOWER_ATTN and the policy choose them (towerAttn) sum a
// row's keys in another order at some width from 2 to takes than at one
// row: then a take's logits alone and in a batch agree within fast's
// tolerance, not to their bits.
func attnOrderByWidth(t *testing.T, takes, headDim int) bool {
	t.Helper()
	a, err := parseTowerAttn(os.Getenv("PROSCENIUM_GPU_TOWER_ATTN"))
	if err != nil {
		t.Fatal(err)
	}
	few1, keys1 := a.choose(1, headDim, dev.Numerics.Exact())
	for n := 2; n <= takes; n++ {
		few, keys := a.choose(n, headDim, dev.Numerics.Exact())
		if few != few1 || few && keys != keys1 {
			return true
		}
	}
	return false
}

// requireSameBits fails unless got and want hold the same float32 bits.
func requireSameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s [%d] = %v, alone %v (must be the same bits)", what, i, got[i], want[i])
		}
	}
}

// TestGemvRows holds the B-row GEMV (gemv_rows_bf16*, one weight read for
// every row) to the one-row GEMV of the same instance on each row, bit for
// bit, at the tower's shapes and a ragged row count, under both policies.
func TestGemvRows(t *testing.T) {
	eachNumerics(t, func(t *testing.T) {
		r := newRand(t)
		for _, shape := range []struct{ rows, cols int }{{4097, 2048}, {1024, 6144}, {1000, 256}, {37, 512}} {
			w := roundBF16(r, shape.rows, shape.cols)
			var a testArena
			var W Tensor
			a.bf16(&W, w)
			a.upload(t)
			exact := dev.Numerics.Exact()
			one := ChooseGemv(false, shape.rows, shape.cols, 1)
			testGemvRowsShape(t, r, &Tower{}, W, shape.rows, shape.cols, exact) // the default choice
			for _, v := range GemvRowsVariants {
				if v.TPR != one.TPR {
					continue // another split of a row: other sums
				}
				testGemvRowsShape(t, r, &Tower{rowsGemv: &v}, W, shape.rows, shape.cols, exact)
			}
		}
	})
}

// TestTowerFastRows holds the fast B-row tower projections on
// towerFastRowsVariant's instances (another split of a row than the one-row
// GEMV's) to engine/cpu within 1e-5, at the tower's shapes it picks for
// (Drama 3's: the tiny towers never take them) and 3–8 rows.
func TestTowerFastRows(t *testing.T) {
	prev := dev.Numerics
	dev.Numerics = drama3.NumericsFast // fast numerics only
	defer func() { dev.Numerics = prev }()
	r := newRand(t)
	tw := &Tower{fastRows: true}
	for _, shape := range []struct{ rows, cols int }{{2048, 4096}, {2048, 6144}, {2048, 2048}, {2560, 2048}, {4097, 2048}, {1024, 2048}} {
		w := roundBF16(r, shape.rows, shape.cols)
		var a testArena
		var W Tensor
		a.bf16(&W, w)
		a.upload(t)
		for _, n := range []int{3, 4, 5, 8} {
			v, ok := towerFastRowsVariant(shape.rows, shape.cols, n)
			if !ok {
				continue
			}
			if got := tw.rowsInstance(shape.rows, shape.cols, n, false); got != v {
				t.Fatalf("[%d, %d], %d rows: gemvRows launches %s, want %s", shape.rows, shape.cols, n, got.Name(), v.Name())
			}
			if got, one := tw.rowsInstance(shape.rows, shape.cols, n, true), tw.rowsVariant(shape.rows, shape.cols, n); got != one {
				t.Fatalf("[%d, %d], %d rows under exact: %s, want the one-row split's %s", shape.rows, shape.cols, n, got.Name(), one.Name())
			}
			x := randNonZero(r, n*shape.cols)
			xb, y := upload(t, x), poisoned(t, n*shape.rows)
			if err := dev.Run(func(q *Queue) error { return tw.gemvRows(q, W, shape.rows, shape.cols, n, Whole(xb), y, false) }); err != nil {
				t.Fatal(err)
			}
			got := download(t, y, n*shape.rows)
			for b := 0; b < n; b++ {
				ref := make([]float32, shape.rows)
				cpu.MatVec(ref, w, x[b*shape.cols:(b+1)*shape.cols], shape.rows, shape.cols)
				checkCloseQuiet(t, fmt.Sprintf("[%d, %d] on %s: row %d of %d", shape.rows, shape.cols, v.Name(), b, n), got[b*shape.rows:(b+1)*shape.rows], ref, 1e-5)
			}
		}
	}
}

// testGemvRowsShape holds tw's B-row GEMV of W [rows, cols] to the one-row
// GEMV of the shape on each row, for 1, 2, 3 and 8 rows.
func testGemvRowsShape(t *testing.T, r *rand.Rand, tw *Tower, W Tensor, rows, cols int, exact bool) {
	one := Gemv{Rows: rows, Cols: cols, N: 1, Mats: 1, WOff: W.Off, Variant: ChooseGemv(false, rows, cols, 1), F64: exact}
	for _, n := range []int{1, 2, 3, TowerMaxTakes} {
		x := randNonZero(r, n*cols)
		xb := upload(t, x)
		y := poisoned(t, n*rows)
		if err := dev.Run(func(q *Queue) error { return tw.gemvRows(q, W, rows, cols, n, Whole(xb), y, exact) }); err != nil {
			t.Fatal(err)
		}
		got := download(t, y, n*rows)
		for b := 0; b < n; b++ {
			xr := upload(t, x[b*cols:(b+1)*cols])
			yr := poisoned(t, rows)
			if err := dev.Run(func(q *Queue) error { return q.GemvBF16(one, yr, W.Block, xr) }); err != nil {
				t.Fatal(err)
			}
			requireSameBits(t, fmt.Sprintf("[%d, %d] on %s: row %d of %d", rows, cols, tw.rowsVariant(rows, cols, n).Name(), b, n),
				got[b*rows:(b+1)*rows], download(t, yr, rows))
		}
	}
}

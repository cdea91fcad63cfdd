//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"os"
	"unsafe"

	"gorgonia.org/cu"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// This file runs the codebook tower, the semantic head, the draws and the
// feedback row on the device (engine/cpu/tower.go and heads.go define the
// arithmetic, engine/drama3/sampler.go the draws). Everything a frame
// touches is allocated by NewTower, every counter lives in the frame control
// block, so Frame enqueues the same launches with the same pointers each
// time: captured once into a graph, it replays for every frame of every take.

// TowerOptions sizes a tower's device state.
type TowerOptions struct {
	MaxRows      int // KV cache rows per layer: prompt rows + frames of the longest take (≤ 8192)
	PrefillChunk int // prompt rows per prefill pass (scratch rows); 0: DefaultTowerPrefillChunk
	// Takes is the take slots (0: 1, at most TowerMaxTakes): each its own
	// control block, KV caches, logits and feedback row (Slot); FrameRows
	// advances slots 0…n−1 by a frame in one pass over the weights.
	Takes int
	// NoDrawnTables leaves out the drawn codes' eh_proj tables
	// (tower_drawn_eh.go: TowerDrawnEHBytes less device memory, a frame
	// ≈ 20 µs slower), as a load does whose model would not fit the device
	// whole with them.
	NoDrawnTables bool
}

// TowerMaxTakes is the most take slots a tower holds (kernels/
// frame_control.cuh FRAME_MAX_TAKES).
const TowerMaxTakes = frameMaxTakes

// Tower is the device tower of one model with its caches. Its methods that
// take a Queue enqueue work (call them inside Device.Run); the others call
// the device themselves (never inside Run).
type Tower struct {
	d   *Device
	w   *TowerTensors
	g   TowerGeometry
	opt TowerOptions

	ctrl      *Block   // FrameControl
	kv        *Block   // per layer: keys [MaxRows, KVHeads·HeadDim], then values
	rope      *Block   // cos [MaxRows, RotaryDim/2], then sin
	zeros     *Block   // int32 [PrefillChunk]: matrix ids of a multi-row GEMV
	cat       *Block   // [chunk, 2·Dim]
	x, normed *Block   // [chunk, Dim]
	mixed, h  *Block   // [chunk, Dim]
	qkv       *Block   // [chunk, (Heads+2·KVHeads)·HeadDim]
	attn      *Block   // [chunk, Heads·HeadDim]
	attnPart  *Block   // [chunk, Heads, TowerAttnSplits, HeadDim+2]: attention's per-split partials
	attnCount *Block   // int32 [chunk, Heads]: splits done (zero between launches)
	gate, up  *Block   // [max(chunk, 2), FFN], [chunk, FFN]
	ids01     *Block   // int32 {0, 1}: gate and up as one launch
	semantic  *Block   // [Entries[0]+1] logits
	residual  []*Block // codebook j: [Entries[j]] logits (index j−1)
	feedback  *Block   // [Dim]: the next backbone input row
	fbTables  *Block   // uint64 [codebooks]: codebook table addresses
	fbEntries *Block   // int32 [codebooks]
	semTokens *Block   // int32 [Entries[0]]
	blocks    []*Block // everything above, for Close

	gemv *GemvVariant // every projection's GEMV instance; nil: ChooseGemv's (tests and the benchmark try others)
	fuse towerFusion  // a frame's launch sequence when gemv is nil (PROSCENIUM_GPU_TOWER)

	rowsGemv *GemvVariant // the B-row GEMVs' instance where its TPR is the one-row choice's (SetRowsGemv); nil: the one-row choice

	gateUpMMA towerGateUpMMA // where the B-row gate·up runs on the tensor cores (tower_gate_up_mma_cuda.go)
	fastRows  bool           // fast B-row projections on towerFastRowsVariant's instances (PROSCENIUM_GPU_TOWER_FAST_ROWS)
	attnSplit towerAttn      // a frame row's attention: which instances and their split, by the launch's rows (PROSCENIUM_GPU_TOWER_ATTN)

	takes  int   // take slots (TowerOptions.Takes)
	slotKV int64 // bytes of one slot's KV caches
	view   bool  // a slot of another tower (Slot): owns nothing

	rowsGemm bool // project runs rows as one GEMM (PromptRows, tower_prompt_cuda.go)

	// drawn[i]: residual layer i's eh_proj as W_h and a table of its drawn
	// code (tower_drawn_eh.go); nil: every layer runs eh_proj after the draw.
	drawn []towerDrawnEH
	// code0 is the code-0 layers' eh_proj by table, by tower layer
	// (tower_drawn_eh.go; nil: none).
	code0 []towerDrawnEH
}

// NewTower checks the tensors and allocates the tower's device state.
func NewTower(d *Device, w *TowerTensors, opt TowerOptions) (*Tower, error) {
	if err := w.Check(); err != nil {
		return nil, err
	}
	if opt.PrefillChunk == 0 {
		opt.PrefillChunk = DefaultTowerPrefillChunk
	}
	opt.Takes = max(opt.Takes, 1)
	if opt.MaxRows < 1 || opt.MaxRows > TowerMaxRows || opt.PrefillChunk < 1 || opt.PrefillChunk > 65535 {
		return nil, fmt.Errorf("cuda tower: max rows %d must be in [1, %d], prefill chunk %d in [1, 65535]",
			opt.MaxRows, TowerMaxRows, opt.PrefillChunk)
	}
	if opt.Takes > TowerMaxTakes {
		return nil, fmt.Errorf("cuda tower: %d take slots, at most %d", opt.Takes, TowerMaxTakes)
	}
	fuse, err := parseTowerFusion(os.Getenv("PROSCENIUM_GPU_TOWER"))
	if err != nil {
		return nil, fmt.Errorf("cuda tower: %w", err)
	}
	rowsGemv, err := ParseGemvRowsVariant(os.Getenv("PROSCENIUM_GPU_TOWER_GEMVX"))
	if err != nil {
		return nil, fmt.Errorf("cuda tower: PROSCENIUM_GPU_TOWER_GEMVX: %w", err)
	}
	gateUpMMA, err := parseTowerGateUpMMA(os.Getenv("PROSCENIUM_GPU_TOWER_GATEUP_MMA"))
	if err != nil {
		return nil, fmt.Errorf("cuda tower: %w", err)
	}
	fastRows, err := parseTowerFastRows(os.Getenv("PROSCENIUM_GPU_TOWER_FAST_ROWS"))
	if err != nil {
		return nil, fmt.Errorf("cuda tower: %w", err)
	}
	attn, err := parseTowerAttn(os.Getenv("PROSCENIUM_GPU_TOWER_ATTN"))
	if err != nil {
		return nil, fmt.Errorf("cuda tower: %w", err)
	}
	g := w.Geometry
	t := &Tower{d: d, w: w, g: g, opt: opt, fuse: fuse, takes: opt.Takes, rowsGemv: rowsGemv, gateUpMMA: gateUpMMA,
		fastRows: fastRows, attnSplit: attn}
	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()
	k := int64(opt.Takes)
	n, D := int64(max(opt.PrefillChunk, opt.Takes)), int64(g.Dim)
	width := int64((g.Heads + 2*g.KVHeads) * g.HeadDim)
	layers := int64(g.SharedLayers + g.ResidualLayers())
	half := int64(g.RotaryDim / 2)
	var allocErr error
	alloc := func(bytes int64) *Block {
		if allocErr != nil {
			return nil
		}
		b, err := d.Alloc(max(bytes, 4))
		if err != nil {
			allocErr = fmt.Errorf("cuda tower: %w", err)
			return nil
		}
		t.blocks = append(t.blocks, b)
		return b
	}
	t.slotKV = layers * 2 * int64(opt.MaxRows) * int64(g.KVHeads*g.HeadDim) * 4
	t.ctrl = alloc(k * frameCtrlWords * 4)
	t.kv = alloc(k * t.slotKV)
	t.rope = alloc(2 * int64(opt.MaxRows) * half * 4)
	t.zeros = alloc(n * 4)
	t.cat = alloc(n * 2 * D * 4)
	t.x, t.normed, t.mixed, t.h = alloc(n*D*4), alloc(n*D*4), alloc(n*D*4), alloc(n*D*4)
	t.qkv = alloc(n * width * 4)
	t.attn = alloc(n * int64(g.Heads*g.HeadDim) * 4)
	t.attnPart = alloc(n * int64(g.Heads*TowerAttnSplits*(g.HeadDim+2)) * 4)
	t.attnCount = alloc(n * int64(g.Heads) * 4)
	t.gate, t.up = alloc(max(n, 2)*int64(g.FFN)*4), alloc(n*int64(g.FFN)*4)
	t.ids01 = alloc(8)
	t.semantic = alloc(k * int64(g.Entries[0]+1) * 4)
	t.residual = make([]*Block, len(g.Entries)-1)
	for j := range t.residual {
		t.residual[j] = alloc(k * int64(g.Entries[j+1]) * 4)
	}
	t.feedback = alloc(k * D * 4)
	t.fbTables = alloc(int64(len(g.Entries)) * 8)
	t.fbEntries = alloc(int64(len(g.Entries)) * 4)
	t.semTokens = alloc(int64(g.Entries[0]) * 4)
	ehLayout := towerDrawnEHLayout(g, towerEH, towerEH0)
	var ehBlock *Block
	if ehLayout.size > 0 && !opt.NoDrawnTables {
		ehBlock = alloc(ehLayout.size)
	}
	if allocErr != nil {
		return nil, allocErr
	}

	cos, sin := drama3.TowerRopeTable(g.RotaryDim, g.RopeTheta, opt.MaxRows)
	tables := make([]uint64, len(g.Entries))
	entries := make([]int32, len(g.Entries))
	for i, cb := range w.Codebooks {
		tables[i] = uint64(tPtr(cb))
		entries[i] = int32(g.Entries[i])
	}
	tokens := make([]int32, len(w.SemanticTokens))
	for i, id := range w.SemanticTokens {
		tokens[i] = int32(id)
	}
	if err := firstErr(
		Upload(d, t.rope, 0, cos), Upload(d, t.rope, int64(len(cos))*4, sin),
		Upload(d, t.zeros, 0, make([]int32, n)), Upload(d, t.ids01, 0, []int32{0, 1}), Upload(d, t.attnCount, 0, make([]int32, n*int64(g.Heads))),
		Upload(d, t.fbTables, 0, tables), Upload(d, t.fbEntries, 0, entries), Upload(d, t.semTokens, 0, tokens),
	); err != nil {
		return nil, fmt.Errorf("cuda tower: %w", err)
	}
	if ehBlock != nil {
		if err := t.buildDrawnEH(ehBlock, ehLayout); err != nil {
			return nil, err
		}
	}
	for s := 0; s < t.takes; s++ { // every slot's counters valid: a free slot's row runs too (FrameRows)
		if err := t.Slot(s).Begin(sampling.Settings{TopP: 1}, 0); err != nil {
			return nil, err
		}
	}
	ok = true
	return t, nil
}

// Takes is the tower's take slots.
func (t *Tower) Takes() int { return t.takes }

// Slot is take slot s of t as a tower of one take: its own control block,
// KV caches, logits and feedback row, t's weights and scratch. Every
// one-take method works on it (Begin, Force, Prefill, Frame, Result…);
// Close frees nothing (t owns it all). Slot 0 of a one-slot tower is t.
func (t *Tower) Slot(s int) *Tower {
	if t.takes == 1 && s == 0 {
		return t
	}
	if s < 0 || s >= t.takes || t.view {
		panic(fmt.Sprintf("cuda tower: slot %d of %d", s, t.takes)) // a programming error
	}
	v := *t
	v.view, v.takes, v.blocks = true, 1, nil
	g := &t.g
	v.ctrl = subBlock(t.ctrl, int64(s)*frameCtrlWords*4, frameCtrlWords*4)
	v.kv = subBlock(t.kv, int64(s)*t.slotKV, t.slotKV)
	v.semantic = subBlock(t.semantic, int64(s)*int64(g.Entries[0]+1)*4, int64(g.Entries[0]+1)*4)
	v.residual = make([]*Block, len(t.residual))
	for j := range t.residual {
		e := int64(g.Entries[j+1]) * 4
		v.residual[j] = subBlock(t.residual[j], int64(s)*e, e)
	}
	v.feedback = subBlock(t.feedback, int64(s)*int64(g.Dim)*4, int64(g.Dim)*4)
	return &v
}

// gatherRows enqueues dst[b] = src[slots[b]] for n rows of Dim floats
// (slots: int32 [n] on the device).
func (t *Tower) gatherRows(q *Queue, dst Tensor, src *Block, slots Tensor, n int) error {
	D := int64(t.g.Dim)
	if err := firstErr(dst.fits(int64(n)*D*4, "gathered rows"), checkFits(src, 0, int64(t.takes)*D*4, "rows by slot"),
		slots.fits(int64(n)*4, "row slots")); err != nil {
		return err
	}
	return kernel.TowerGatherRows(q, [3]int{n, 1, 1}, elementwiseThreads, tPtr(dst), devPtr(src), tPtr(slots), t.g.Dim)
}

// subBlock is bytes of b from off, never freed.
func subBlock(b *Block, off, bytes int64) *Block {
	return &Block{Kind: b.Kind, Ptr: b.Ptr + uintptr(off), Bytes: bytes}
}

// Close frees the tower's device state (not the weights; nothing for a Slot).
func (t *Tower) Close() error {
	var errs []error
	for _, b := range t.blocks {
		errs = append(errs, t.d.Free(b))
	}
	t.blocks = nil
	return firstErr(errs...)
}

// Geometry is the tower's geometry.
func (t *Tower) Geometry() TowerGeometry { return t.g }

// Begin starts a take: the sampling settings and seed, frame and row
// counters at zero, nothing forced. Not inside Run.
func (t *Tower) Begin(s sampling.Settings, seed uint64) error { return t.BeginAt(s, seed, 0) }

// BeginAt is Begin with rows tower rows already done: the next frame's row
// is at position rows (the benchmark replays frames from a row of its
// choice). Not inside Run.
func (t *Tower) BeginAt(s sampling.Settings, seed uint64, rows int) error {
	c, err := newFrameControl(s, seed, rows)
	if err != nil {
		return err
	}
	return t.writeControl(0, c[:])
}

// Force makes the following frames take codes (codebook 0 first; the end
// index Entries[0] is end of speech) instead of drawing them, the teacher-
// forced mode; Force(nil) draws again. Not inside Run.
func (t *Tower) Force(codes []int) error {
	words := make([]uint32, 1+frameMaxCodebooks)
	if codes != nil {
		if len(codes) != len(t.g.Entries) {
			return fmt.Errorf("cuda tower: %d forced codes, the model has %d codebooks", len(codes), len(t.g.Entries))
		}
		for i, c := range codes {
			limit := t.g.Entries[i]
			if i == 0 {
				limit++ // end of speech
			}
			if c < 0 || c >= limit {
				return fmt.Errorf("cuda tower: forced code %d outside codebook %d's [0, %d)", c, i, limit)
			}
			words[1+i] = uint32(c)
		}
		words[0] = 1
	}
	return t.writeControl(fcForced, words)
}

// writeControl copies words into the control block from word off once the
// stream's work is done (Upload drains it first).
func (t *Tower) writeControl(off int, words []uint32) error {
	return Upload(t.d, t.ctrl, int64(off)*4, words)
}

// Result reads the last frame's codes, end flag and errors (a device sync).
// Not inside Run.
func (t *Tower) Result() (FrameResult, error) {
	words := make([]uint32, FrameResultBytes/4)
	if err := Download(t.d, words, t.ctrl, FrameResultOffset); err != nil {
		return FrameResult{}, err
	}
	return decodeFrameResult(words, len(t.g.Entries)), nil
}

// CopyResult enqueues the copy of the frame's result (FrameResultBytes)
// into pinned host memory, to be read with ReadResult once the stream has
// reached it: the one device-to-host transfer of a frame, capturable with it.
func (t *Tower) CopyResult(q *Queue, pinned *Block) error {
	if pinned == nil || pinned.Kind != PinnedMem || pinned.Bytes < FrameResultBytes {
		return fmt.Errorf("cuda tower: the frame result needs %d bytes of pinned host memory", FrameResultBytes)
	}
	return cu.MemcpyDtoHAsync(pinned.Host, cu.DevicePtr(t.ctrl.Ptr+FrameResultOffset), FrameResultBytes, q.Stream())
}

// ReadResult decodes a result CopyResult placed in pinned memory (after the
// stream passed the copy).
func (t *Tower) ReadResult(pinned *Block) FrameResult {
	words := unsafe.Slice((*uint32)(pinned.Host), FrameResultBytes/4)
	return decodeFrameResult(words, len(t.g.Entries))
}

// FrameRowsResultBytes is the pinned memory CopyResultRows of a tower of
// takes slots needs.
func FrameRowsResultBytes(takes int) int64 { return int64(takes) * frameCtrlWords * 4 }

// CopyResultRows enqueues the copy of every slot's control block (its
// result among it) into pinned host memory, for ReadResultRow: a batched
// frame's one device-to-host transfer, capturable with it.
func (t *Tower) CopyResultRows(q *Queue, pinned *Block) error {
	bytes := FrameRowsResultBytes(t.takes)
	if t.view {
		return fmt.Errorf("cuda tower: the results of every slot are the whole tower's")
	}
	if pinned == nil || pinned.Kind != PinnedMem || pinned.Bytes < bytes {
		return fmt.Errorf("cuda tower: the results of %d take slots need %d bytes of pinned host memory", t.takes, bytes)
	}
	return cu.MemcpyDtoHAsync(pinned.Host, cu.DevicePtr(t.ctrl.Ptr), bytes, q.Stream())
}

// ReadResultRow decodes slot b's result from a CopyResultRows copy (after
// the stream passed it).
func (t *Tower) ReadResultRow(pinned *Block, b int) FrameResult {
	words := unsafe.Slice((*uint32)(pinned.Host), (b+1)*frameCtrlWords)
	return decodeFrameResult(words[b*frameCtrlWords+fcCodes:], len(t.g.Entries))
}

// Control is the frame control block: the frame's result is FrameResultBytes
// at FrameResultOffset (the bytes to copy to pinned memory after a frame).
func (t *Tower) Control() *Block { return t.ctrl }

// SemanticLogits is the last frame's semantic logits [Entries[0]+1] (end of
// speech last); ResidualLogits(j) codebook j's [Entries[j]], 1 ≤ j.
func (t *Tower) SemanticLogits() *Block      { return t.semantic }
func (t *Tower) ResidualLogits(j int) *Block { return t.residual[j-1] }

// FeedbackRow is the backbone input row [Dim] of the last frame's codes
// (NaN after end of speech).
func (t *Tower) FeedbackRow() *Block { return t.feedback }

// Prefill enqueues n text rows (code mask 0) through every layer, given the
// backbone's final-norm hidden states [n, Dim] at hidden.
func (t *Tower) Prefill(q *Queue, hidden Tensor, n int) error {
	D := t.g.Dim
	if err := hidden.fits(int64(n)*int64(D)*4, "tower prefill hidden rows"); err != nil {
		return err
	}
	text := ehInput{mode: ehText}
	for r := 0; r < n; r += t.opt.PrefillChunk {
		m := min(t.opt.PrefillChunk, n-r)
		in := ehInput{mode: ehText, h: tPtr(hidden.At(int64(r * D * 4)))}
		for li := 0; li < t.layers(); li++ {
			next := &text
			if li == t.layers()-1 {
				next = nil
			}
			if err := t.layer(q, li, m, in, next, frameRows{}); err != nil {
				return err
			}
			in = ehInput{mode: ehMade}
		}
		if err := kernel.TowerAdvance(q, [3]int{1, 1, 1}, 32, devPtr(t.ctrl), m, 0); err != nil {
			return err
		}
	}
	return nil
}

// Frame enqueues one whole frame after the backbone step: the semantic
// logits of hidden (the row's final-norm hidden state [Dim]) and codebook
// 0's draw (or end of speech), the shared layers, each residual layer with
// its head and draw, the feedback row of the codes, and the counters' step.
// The codes and end flag land in the control block (Result). Every pointer
// and argument is the same for every frame: the launches can be captured
// once (Queue.Capture) and replayed. Rows past MaxRows are not written; the
// result's error bits say so (rows are counted on the device only).
func (t *Tower) Frame(q *Queue, hidden Tensor) error { return t.frame(q, hidden, 1, frameRows{}) }

// FrameRows enqueues one frame of each of n takes (1 ≤ n ≤ Takes): row
// b is the take in slot slots[b] (slots: int32 [n] on the device, distinct,
// read when the launches run, so one captured graph per n serves any
// choice; a zero Tensor: slot b), hidden holds the rows' backbone states
// [n, Dim]. Frame's launches, each over the n rows with every weight read
// once for all of them (gemvx_*, tower_gate_up_swiglu_rows_*), each row
// drawing with its slot's settings and counters on its slot's caches; the
// slot's codes, end flag and errors land in its control block, its
// feedback row in its FeedbackRow (Slot). Each take's codes, logits and
// feedback row are those Frame gives it alone, bit for bit
// (TestTowerFrameRows); the logits are row b's of SemanticLogits and
// ResidualLogits (the slot's when slots is zero).
func (t *Tower) FrameRows(q *Queue, hidden Tensor, n int, slots Tensor) error {
	if t.view || n < 1 || n > t.takes {
		return fmt.Errorf("cuda tower: a frame of %d takes on a tower of %d slots", n, t.takes)
	}
	if n == 1 && slots.Block == nil { // slot 0 alone: Frame
		return t.frame(q, hidden, 1, frameRows{})
	}
	rows := frameRows{byTake: true}
	if slots.Block != nil {
		if err := slots.fits(int64(n)*4, "tower frame slots"); err != nil {
			return err
		}
		rows.slots = tPtr(slots)
	}
	return t.frame(q, hidden, n, rows)
}

// frameRows says what a frame's rows are: one take's (Frame, Prefill), or
// with byTake each row another take's, row b in slot slots[b] (0: slot b).
type frameRows struct {
	byTake bool
	slots  kernel.Ptr
}

// frame is Frame (one take) or FrameRows.
func (t *Tower) frame(q *Queue, hidden Tensor, n int, rows frameRows) error {
	g := &t.g
	byTake := rows.byTake
	row, err := hidden.view(int64(n)*int64(g.Dim)*4, "tower hidden rows")
	if err != nil {
		return err
	}
	// Layer 0 by table (towerEH0Merged): hnorm(h) and W_h·hnorm(h) before
	// the draw, beside the semantic head where headAndHnorm merges (under
	// fast: exact sums the head in float64, below).
	tab0, semantic := t.code0EH(0), false
	merged0 := tab0 != nil && towerEH0 == towerEH0Merged
	if merged0 {
		if err := t.hnormRows(q, tPtr(hidden), t.layerTensors(0), n); err != nil {
			return err
		}
		if !q.d.Numerics.Exact() && t.mergesHeadAndHnorm(byTake, n) {
			if err := t.headAndHnorm(q, byTake, t.w.SemanticHead, g.Entries[0]+1, row, tab0, n, t.semantic); err != nil {
				return err
			}
			semantic = true
		} else if err := t.projectRows(q, byTake, tab0.wh, g.Dim, g.Dim, n, t.cat, t.x); err != nil {
			return err
		}
	}
	// The semantic head reads the backbone's row, which under exact
	// numerics has the CPU's bits (the numerics contract, docs/MODEL.md):
	// summed in float64 like cpu.MatVec, its logits keep them, so the
	// frame's first draw sees the CPU's logits exactly. Under fast numerics
	// it sums float32 like the tower's own GEMVs.
	switch {
	case semantic: // with layer 0's W_h above
	case byTake:
		if err := t.gemvRows(q, t.w.SemanticHead, g.Entries[0]+1, g.Dim, n, Whole(row), t.semantic, q.d.Numerics.Exact()); err != nil {
			return err
		}
	default:
		sem := Gemv{Rows: g.Entries[0] + 1, Cols: g.Dim, N: 1, Mats: 1, WOff: t.w.SemanticHead.Off,
			Variant: t.gemvVariant(g.Entries[0]+1, g.Dim, 1), F64: q.d.Numerics.Exact(), WeightsAhead: gemvAhead[siteTower]}
		if err := q.GemvBF16(sem, t.semantic, t.w.SemanticHead.Block, row); err != nil {
			return err
		}
	}
	// Layer 0's table norm in the semantic draw's tail where the draws fold
	// it (its W_h·hnorm(h) ran above).
	foldTab0 := merged0 && drawFoldsTable()
	if foldTab0 {
		if err := q.sampleLogitsTable(t.semantic, g.Entries[0]+1, 0, g.Entries[0], t.ctrl, n, t.drawTable(tab0, t.layerTensors(0).AttentionNorm), rows.slots); err != nil {
			return err
		}
	} else if err := q.sampleLogits(t.semantic, g.Entries[0]+1, 0, g.Entries[0], t.ctrl, nil, n, nil, rows.slots); err != nil {
		return err
	}
	// Each layer's eh_proj input is made by the launch before it: the first
	// layer's by tower_eh_input, later ones' by the previous layer's out
	// norm (tower_out_eh), whose embedding half, for a code drawn after
	// that layer, the draw writes. With the drawn tables (t.drawn,
	// tower_drawn_eh.go) a layer whose code is drawn just before it runs
	// no eh_proj: the out norm writes hnorm(h_out) alone, W_h projects it
	// beside the codebook head, and the attention norm adds the code's row
	// of the table. With the code-0 tables (t.code0) a layer that embeds
	// code 0 projects W_h·hnorm(h_in) (the out norm before it writing
	// hnorm(h_in) alone) and adds T[c0] in its attention norm; the first
	// layer's projection ran above or runs in the layer.
	code0 := ehInput{mode: ehCode, table: t.w.Codebooks[0], entries: g.Entries[0], slot: 0}
	in := code0
	in.h = tPtr(hidden)
	switch {
	case merged0:
		in = ehInput{mode: ehTable, drawn: tab0, normed: foldTab0}
	case tab0 != nil:
		in = ehInput{mode: ehTable, drawn: tab0, project: true, h: tPtr(hidden)}
	}
	S, L := g.SharedLayers, t.layers()
	for li := 0; li < L; li++ {
		j := li - S + 1 // residual layer j ≥ 1 gives codebook j
		var next *ehInput
		drawn := t.drawnEH(j)        // residual layer j (the next layer) by table
		nextTab := t.code0EH(li + 1) // the next layer embeds code 0 by table
		switch {
		case li+1 == L:
		case j < 1 && nextTab != nil: // code 0, drawn already, by table: hnorm(h_out) rows for W_h
			next = &ehInput{mode: ehHnormRows}
		case j < 1: // the next layer embeds code 0 (the shared layers, residual layer 1)
			next = &code0
		case drawn != nil: // code j, drawn below, by table: hnorm(h_out) rows for W_h
			next = &ehInput{mode: ehHnormRows}
		default: // the next layer embeds code j, drawn below
			next = &ehInput{mode: ehByDraw}
		}
		if err := t.layer(q, li, n, in, next, rows); err != nil {
			return err
		}
		in = ehInput{mode: ehMade}
		if j < 1 {
			if next != nil && next.mode == ehHnormRows {
				in = ehInput{mode: ehTable, drawn: nextTab, project: true}
			}
			continue
		}
		head, logits := t.w.Residual[j-1].Head, t.residual[j-1]
		fold := false
		if next != nil && next.mode == ehHnormRows {
			if err := t.headAndHnorm(q, byTake, head, g.Entries[j], t.h, drawn, n, logits); err != nil {
				return err
			}
			fold = drawFoldsTable()
			in = ehInput{mode: ehTable, drawn: drawn, normed: fold}
		} else if err := t.projectRows(q, byTake, head, g.Entries[j], g.Dim, n, t.h, logits); err != nil {
			return err
		}
		if fold { // the next layer's table norm in the draw's tail
			if err := q.sampleLogitsTable(logits, g.Entries[j], j, -1, t.ctrl, n, t.drawTable(drawn, t.layerTensors(li+1).AttentionNorm), rows.slots); err != nil {
				return err
			}
			continue
		}
		var emb *drawEmbed
		if next != nil && next.mode == ehByDraw {
			emb = &drawEmbed{Table: t.w.Codebooks[j], Entries: g.Entries[j], ENorm: t.layerTensors(li + 1).ENorm,
				Dst: devPtr(t.cat), Width: g.Dim, Eps: g.Eps}
		}
		if err := q.sampleLogits(t.residual[j-1], g.Entries[j], j, -1, t.ctrl, nil, n, emb, rows.slots); err != nil {
			return err
		}
	}
	div := float32(math.Sqrt(float64(len(g.Entries) + 1)))
	if byTake {
		return kernel.TowerFeedbackTakes(q, [3]int{n, 1, 1}, 1024, devPtr(t.feedback), tPtr(t.w.TextEmbed), devPtr(t.semTokens), devPtr(t.fbTables), devPtr(t.fbEntries), devPtr(t.ctrl), len(g.Entries), g.Dim, div, rows.slots)
	}
	if err := kernel.TowerFeedback(q, [3]int{1, 1, 1}, 1024, devPtr(t.feedback), tPtr(t.w.TextEmbed), devPtr(t.semTokens), devPtr(t.fbTables), devPtr(t.fbEntries), devPtr(t.ctrl), len(g.Entries), g.Dim, div); err != nil {
		return err // tower_feedback also steps the counters (1 row, 1 frame)
	}
	return nil
}

// towerRowThreads is a row norm's block (its values in registers:
// kernels/norms.cu ROW_REGS, TowerMaxDim). Blocks of ⌈dim/8⌉ threads (256 at
// Drama 3's width) measured slower: the frame 0.746 → 0.840 ms
// (docs/PERF.md "chain20").
const towerRowThreads = 1024

// towerAttnThreads is a tower attention block's threads (a warp per key).
const towerAttnThreads = kernel.AttnWarps * 32

func (t *Tower) layers() int { return t.g.SharedLayers + t.g.ResidualLayers() }

// layerTensors is tower layer li's weights (the shared layers first).
func (t *Tower) layerTensors(li int) *TowerLayerTensors {
	if li < t.g.SharedLayers {
		return &t.w.Shared[li]
	}
	return &t.w.Residual[li-t.g.SharedLayers]
}

// gemvVariant is the GEMV instance of a [rows, cols] projection of n matrices.
func (t *Tower) gemvVariant(rows, cols, n int) GemvVariant {
	if t.gemv != nil {
		return *t.gemv
	}
	return ChooseGemv(false, rows, cols, n)
}

// projectRows is project, or with byTake the B-row GEMV of n takes' rows
// (x [n, cols] into y [n, rows]).
func (t *Tower) projectRows(q *Queue, byTake bool, W Tensor, rows, cols, n int, x, y *Block) error {
	if !byTake {
		return t.project(q, W, rows, cols, n, x, y)
	}
	return t.gemvRows(q, W, rows, cols, n, Whole(x), y, false)
}

// gemvRows enqueues y[b] = W·x[b] for n ≤ TowerMaxTakes rows of x ([n,
// cols] from x, into y [n, rows]) reading W once (Queue.GemvRowsBF16,
// kernels/gemv.cu gemvx_*; exact: the float64 instances, the semantic head
// under exact numerics), on the instance the one-row GEMV of the shape
// runs, so each row's values are its bits; under fast numerics, where
// t.fastRows and towerFastRowsVariant say, another split measured faster
// (within rounding of them). (On the tensor cores these projections
// measured slower: docs/PERF.md "gate23".)
func (t *Tower) gemvRows(q *Queue, W Tensor, rows, cols, n int, x Tensor, y *Block, exact bool) error {
	wb, err := W.view(int64(rows)*int64(cols)*2, "B-row gemv weights")
	if err != nil {
		return err
	}
	xb, err := x.view(int64(n)*int64(cols)*4, "B-row gemv x")
	if err != nil {
		return err
	}
	return q.GemvRowsBF16(GemvRows{Rows: rows, Cols: cols, NB: n, Variant: t.rowsInstance(rows, cols, n, q.d.Numerics.Exact()), F64: exact,
		WeightsAhead: rowsAhead(siteTower, n)}, y, wb, xb)
}

// rowsInstance is the B-row GEMV instance gemvRows launches for a [rows,
// cols] projection of n rows under the device's policy (exact: the
// policy's): rowsVariant's, or under fast numerics towerFastRowsVariant's
// where t.fastRows and no test or benchmark override says otherwise.
func (t *Tower) rowsInstance(rows, cols, n int, exact bool) GemvVariant {
	if fv, ok := towerFastRowsVariant(rows, cols, n); ok && t.fastRows && !exact && t.gemv == nil && t.rowsGemv == nil {
		return fv
	}
	return t.rowsVariant(rows, cols, n)
}

// rowsVariant is the B-row GEMV instance of a [rows, cols] projection of n
// rows: t.rowsGemv when it has the one-row GEMV's threads per row
// (SetRowsGemv); else, from 3 rows on, a group's 4 rows at a time where the
// one-row GEMV runs 2 (t128r4u2 for t128r2u2: each x chunk loaded once for
// twice the weights, the loads of x growing with the rows, and a row's two
// chunks in flight at once: the four takes' frame 1.151 against 1.167 ms
// with t128r4u1, eight 2.063 against 2.088, session 10 run 3), else the
// one-row GEMV's (gemvVariant). A row's chunks, their order and the
// reductions depend on TPR alone, so each row keeps the one-row GEMV's bits
// (TestGemvRows holds every such instance to it).
func (t *Tower) rowsVariant(rows, cols, n int) GemvVariant {
	v := t.gemvVariant(rows, cols, 1)
	if r := t.rowsGemv; r != nil && r.TPR == v.TPR {
		return *r
	}
	if wide := (GemvVariant{TPR: v.TPR, Rows: 4, Unroll: 2}); t.gemv == nil && n >= 3 && v == (GemvVariant{128, 2, 2}) {
		return wide
	}
	return v
}

// gateUpRows is gateUp over n takes' rows: with the frame's gate·up fusion
// one launch (under fast numerics, where t.gateUpMMA says, on the tensor
// cores: within rounding of gateUp's one row; else
// tower_gate_up_swiglu_rows: each row's values those of gateUp's one row),
// else the B-row GEMVs of W1 and W3 and swiglu_f32 (gateUp's values too).
func (t *Tower) gateUpRows(q *Queue, lw *TowerLayerTensors, n int) error {
	F, D := t.g.FFN, t.g.Dim
	if t.frameFusion(1).gateUp {
		if err := firstErr(lw.W1.fits(int64(F)*int64(D)*2, "gate weights"), lw.W3.fits(int64(F)*int64(D)*2, "up weights")); err != nil {
			return fmt.Errorf("cuda tower: fused B-row gate·up: %w", err)
		}
		if t.gateUpRowsOnMMA(n, q.d.Numerics.Exact()) {
			return kernel.TowerGateUpSwiGLUMmaFast(q, [3]int{(F + 15) / 16, 1, 1}, gemvThreads, devPtr(t.gate), tPtr(lw.W1), tPtr(lw.W3), devPtr(t.normed), n, F, D)
		}
		width := gemvRowsWidth(n)
		if width == 0 {
			return fmt.Errorf("cuda tower: gate·up of %d rows", n)
		}
		// From 3 rows on two rows of each matrix a group, as rowsVariant's
		// projections take four (unless SetRowsGemv chose fewer).
		if n >= 3 && width >= 4 && (t.rowsGemv == nil || t.rowsGemv.Rows >= 4) {
			if r := t.rowsGemv; r == nil || r.Unroll == 2 { // t128r4u2's loads: a row's two chunks in flight at once
				k := kernel.TowerGateUpSwiGLURows2u2Kernel(fmt.Sprintf("tower_gate_up_swiglu_rows2u2_b%d", width))
				return kernel.TowerGateUpSwiGLURows2u2(q, k, [3]int{(F + 3) / 4, 1, 1}, towerGemvThreads, devPtr(t.gate), tPtr(lw.W1), tPtr(lw.W3), devPtr(t.normed), n, F, D)
			}
			k := kernel.TowerGateUpSwiGLURows2Kernel(fmt.Sprintf("tower_gate_up_swiglu_rows2_b%d", width))
			return kernel.TowerGateUpSwiGLURows2(q, k, [3]int{(F + 3) / 4, 1, 1}, towerGemvThreads, devPtr(t.gate), tPtr(lw.W1), tPtr(lw.W3), devPtr(t.normed), n, F, D)
		}
		k := kernel.TowerGateUpSwiGLURowsKernel(fmt.Sprintf("tower_gate_up_swiglu_rows_b%d", width))
		return kernel.TowerGateUpSwiGLURows(q, k, [3]int{(F + 1) / 2, 1, 1}, towerGemvThreads, devPtr(t.gate), tPtr(lw.W1), tPtr(lw.W3), devPtr(t.normed), n, F, D)
	}
	if err := firstErr(t.gemvRows(q, lw.W1, F, D, n, Whole(t.normed), t.gate, false), t.gemvRows(q, lw.W3, F, D, n, Whole(t.normed), t.up, false)); err != nil {
		return err
	}
	return q.SwiGLU(t.gate, t.gate, t.up, n*F)
}

// project enqueues y[r] = W·x[r] for n rows of x (one GEMV launch; several
// rows share the matrix through the multi-matrix path with every id 0).
func (t *Tower) project(q *Queue, W Tensor, rows, cols, n int, x, y *Block) error {
	if t.rowsGemm && n > 1 {
		if done, err := t.projectPromptRows(q, W, rows, cols, n, x, y); done || err != nil {
			return err
		}
	}
	gm := Gemv{Rows: rows, Cols: cols, N: 1, Mats: 1, WOff: W.Off, Variant: t.gemvVariant(rows, cols, 1), WeightsAhead: gemvAhead[siteTower]}
	if n > 1 {
		gm.N, gm.Ids, gm.IdsReady, gm.XStride = n, t.zeros, true, cols
	}
	return q.GemvBF16(gm, y, W.Block, x)
}

// ehMode says how a layer's eh_proj input (t.cat: [enorm(E[code]);
// hnorm(h_in)] per row) is made.
type ehMode int

const (
	ehText      ehMode = iota // text rows: the zero embedding
	ehCode                    // an audio row embedding ctrl.codes[slot] of table
	ehByDraw                  // the hnorm half only: the draw that picks the code writes the embedding half
	ehMade                    // made already (by the previous layer's out norm and the draw since)
	ehHnormRows               // hnorm(h_in) alone, as [n, Dim] rows of t.cat: the W_h projection's input (tower_drawn_eh.go)
	ehTable                   // x holds W_h·hnorm(h_in) (project: the layer projects it); the attention norm adds the code's table row
)

// ehInput is a layer's eh_proj input: the mode and, for ehText and ehCode,
// h_in (ignored where the previous layer makes it) and the code's table.
type ehInput struct {
	mode    ehMode
	h       kernel.Ptr
	table   Tensor
	entries int
	slot    int
	drawn   *towerDrawnEH // ehTable: the layer's W_h and table
	// project (ehTable): x is the layer's to project, W_h·hnorm(h_in) from
	// hnorm(h_in) rows in cat, which the out norm before it wrote or, with
	// h, the layer norms from h first (hnormRows).
	project bool
	// normed (ehTable): the draw before the layer did its table norm
	// (sampleLogitsTable): x and the attention norm's output are made.
	normed bool
}

// outEH enqueues tower_out_eh: layer li's out norm into t.h, and the eh_proj
// input of layer li+1 made as next says: tower_out_eh's emode 0 text, 1 a
// code, 2 left to the draw.
func (t *Tower) outEH(q *Queue, li, n int, next *ehInput, slots kernel.Ptr) error {
	emode, table := 0, kernel.Ptr(0)
	switch next.mode {
	case ehCode:
		emode, table = 1, tPtr(next.table)
	case ehByDraw:
		emode = 2
	case ehHnormRows:
		emode = 3
	}
	g := &t.g
	return kernel.TowerOutEH(q, [3]int{n, 1, 1}, towerRowThreads, kernel.TowerOutEHArgs{H: devPtr(t.h), X: devPtr(t.x),
		Add: devPtr(t.mixed), OutW: tPtr(t.layerTensors(li).OutNorm), Cat: devPtr(t.cat), Emode: emode, Table: table,
		Ctrl: devPtr(t.ctrl), CodeSlot: next.slot, Entries: next.entries, Enorm: tPtr(t.layerTensors(li + 1).ENorm),
		Hnorm: tPtr(t.layerTensors(li + 1).HNorm), Width: g.Dim, Eps: g.Eps, Slots: slots})
}

// layer enqueues tower layer li over n rows at positions ctrl.pos…, its
// h_out in t.h. in says how its eh_proj input is made: ehText or ehCode by
// its own tower_eh_input from in.h, ehMade by the launches before it. next
// not nil: its out norm also makes layer li+1's input (tower_out_eh; next's
// mode ehText, ehCode or ehByDraw), else it writes t.h alone. One row
// (a frame) turns and caches its key in the attention launch
// (tower_attend_rope); prefill rows take tower_rope_append first, since
// rows of one launch read each other's keys.
// With rows.byTake the n rows are frame rows of takes (FrameRows): the
// B-row GEMVs, each row's attention on its own slot's caches.
func (t *Tower) layer(q *Queue, li, n int, in ehInput, next *ehInput, rows frameRows) error {
	byTake := rows.byTake
	g := &t.g
	lw := t.layerTensors(li)
	D, hd, nh, nkv := g.Dim, g.HeadDim, g.Heads, g.KVHeads
	width := (nh + 2*nkv) * hd
	kvBytes := uint64(t.opt.MaxRows) * uint64(nkv*hd) * 4
	kc := kernel.Ptr(uint64(t.kv.Ptr) + uint64(li)*2*kvBytes)
	vc := kc + kernel.Ptr(kvBytes)
	half := g.RotaryDim / 2
	cosT := devPtr(t.rope)
	sinT := cosT.Add(int64(t.opt.MaxRows*half) * 4)
	scale := float32(1 / math.Sqrt(float64(hd)))
	grid := [3]int{n, 1, 1}
	attnGrid := [3]int{nh, TowerAttnSplits, n}
	return firstErrFn(
		func() error {
			if in.mode == ehTable && in.h != 0 {
				return t.hnormRows(q, in.h, lw, n)
			}
			if in.mode == ehMade || in.mode == ehTable {
				return nil
			}
			var table kernel.Ptr
			if in.mode == ehCode {
				table = tPtr(in.table)
			}
			return kernel.TowerEHInput(q, grid, towerRowThreads, devPtr(t.cat), in.h, table, devPtr(t.ctrl), in.slot, in.entries, tPtr(lw.ENorm), tPtr(lw.HNorm), D, g.Eps, rows.slots)
		},
		func() error {
			if in.mode == ehTable && in.project {
				return t.projectRows(q, byTake, in.drawn.wh, D, D, n, t.cat, t.x)
			}
			if in.mode == ehTable { // x = W_h·hnorm(h_in) already (headAndHnorm)
				return nil
			}
			return t.projectRows(q, byTake, lw.EHProj, D, 2*D, n, t.cat, t.x)
		},
		func() error {
			if in.mode == ehTable && in.normed {
				return nil
			}
			if in.mode == ehTable {
				return t.tableNorm(q, in.drawn, lw.AttentionNorm, n, rows.slots)
			}
			return t.addNorm(q, t.normed, 0, lw.AttentionNorm, n)
		},
		func() error { return t.projectRows(q, byTake, lw.WQKV, width, D, n, t.normed, t.qkv) },
		func() error {
			few, keys := t.attnSplit.choose(n, hd, q.d.Numerics.Exact())
			if byTake {
				a := kernel.TowerAttendRopeTakesArgs{
					Attn: devPtr(t.attn), Qkv: devPtr(t.qkv), Kc: kc, Vc: vc, Ctrl: devPtr(t.ctrl), Part: devPtr(t.attnPart),
					Counters: devPtr(t.attnCount), CosT: cosT, SinT: sinT, Nh: nh, Nkv: nkv, Hd: hd, Half: half, Scale: scale,
					MaxRows: t.opt.MaxRows, KVStride: t.slotKV / 4, Slots: rows.slots}
				if few {
					return kernel.TowerAttendRopeTakesH128(q, attnGrid, towerAttnThreads, kernel.TowerAttendRopeTakesH128Args{
						Attn: a.Attn, Qkv: a.Qkv, Kc: a.Kc, Vc: a.Vc, Ctrl: a.Ctrl, Part: a.Part, Counters: a.Counters, CosT: a.CosT,
						SinT: a.SinT, Nh: a.Nh, Nkv: a.Nkv, Hd: a.Hd, Half: a.Half, Scale: a.Scale, MaxRows: a.MaxRows,
						KVStride: a.KVStride, Slots: a.Slots, SplitKeys: keys})
				}
				return kernel.TowerAttendRopeTakes(q, attnGrid, towerAttnThreads, a)
			}
			if n == 1 {
				a := kernel.TowerAttendRopeArgs{
					Attn: devPtr(t.attn), Qkv: devPtr(t.qkv), Kc: kc, Vc: vc, Ctrl: devPtr(t.ctrl), Part: devPtr(t.attnPart),
					Counters: devPtr(t.attnCount), CosT: cosT, SinT: sinT, Nh: nh, Nkv: nkv, Hd: hd, Half: half, Scale: scale,
					MaxRows: t.opt.MaxRows}
				if few {
					return kernel.TowerAttendRopeH128(q, attnGrid, towerAttnThreads, kernel.TowerAttendRopeH128Args{
						Attn: a.Attn, Qkv: a.Qkv, Kc: a.Kc, Vc: a.Vc, Ctrl: a.Ctrl, Part: a.Part, Counters: a.Counters, CosT: a.CosT,
						SinT: a.SinT, Nh: a.Nh, Nkv: a.Nkv, Hd: a.Hd, Half: a.Half, Scale: a.Scale, MaxRows: a.MaxRows,
						SplitKeys: keys})
				}
				return kernel.TowerAttendRope(q, attnGrid, towerAttnThreads, a)
			}
			if err := kernel.TowerRopeAppend(q, grid, elementwiseThreads, devPtr(t.qkv), kc, vc, cosT, sinT, devPtr(t.ctrl), nh, nkv, hd, half, t.opt.MaxRows); err != nil {
				return err
			}
			return kernel.TowerAttend(q, attnGrid, towerAttnThreads, devPtr(t.attn), devPtr(t.qkv), kc, vc, devPtr(t.ctrl), devPtr(t.attnPart), devPtr(t.attnCount), nh, nkv, hd, scale, t.opt.MaxRows)
		},
		func() error { return t.projectRows(q, byTake, lw.WO, D, nh*hd, n, t.attn, t.mixed) },
		func() error { return t.addNorm(q, t.normed, devPtr(t.mixed), lw.FFNNorm, n) },
		func() error {
			if byTake {
				return t.gateUpRows(q, lw, n)
			}
			return t.gateUp(q, t.frameFusion(n), lw, n)
		},
		func() error { return t.projectRows(q, byTake, lw.W2, D, g.FFN, n, t.gate, t.mixed) },
		func() error {
			if next == nil {
				return t.addNorm(q, t.h, devPtr(t.mixed), lw.OutNorm, n)
			}
			return t.outEH(q, li, n, next, rows.slots)
		},
	)
}

// frameFusion is the launch sequence of n rows: t.fuse for a frame's one row
// on ChooseGemv's instances; the plain one for prefill rows and when a test
// or the benchmark puts every projection on another GEMV instance (the
// fused GEMV computes as t128r2u2).
func (t *Tower) frameFusion(n int) towerFusion {
	if n != 1 || t.gemv != nil {
		return towerFusion{}
	}
	return t.fuse
}

// towerGemvThreads is tower_gate_up_swiglu's block (two groups of 128
// threads, a row of each matrix a group).
const towerGemvThreads = kernel.TgThreads

// gateUp enqueues silu(W1·x)·(W3·x) of n rows of t.normed into t.gate. With
// fuse.gateUp one launch does it all (tower_gate_up_swiglu); otherwise one
// row whose W3 directly follows W1 in the same block (as the bench and test
// arenas place them) takes one GEMV launch for both, the two outputs side by
// side, then swiglu_f32.
func (t *Tower) gateUp(q *Queue, fuse towerFusion, lw *TowerLayerTensors, n int) error {
	F, D := t.g.FFN, t.g.Dim
	if fuse.gateUp {
		gm := Gemv{Rows: F, Cols: D, N: 1, Mats: 1, Variant: GemvVariant{TPR: 128, Rows: 2, Unroll: 2}}
		gm1, gm3 := gm, gm
		gm1.WOff, gm3.WOff = lw.W1.Off, lw.W3.Off
		if err := firstErr(gm1.check("bf16", 2, lw.W1.Block, t.normed, t.gate), gm3.check("bf16", 2, lw.W3.Block, t.normed, t.gate)); err != nil {
			return fmt.Errorf("cuda tower: tower_gate_up_swiglu: %w", err)
		}
		return kernel.TowerGateUpSwiGLU(q, [3]int{(F + 1) / 2, 1, 1}, towerGemvThreads, devPtr(t.gate), tPtr(lw.W1), tPtr(lw.W3), devPtr(t.normed), F, D, b2i(gemvAhead[siteTower]))
	}
	if n == 1 && lw.W3.Block == lw.W1.Block && lw.W3.Off == lw.W1.Off+int64(F)*int64(D)*2 {
		gm := Gemv{Rows: F, Cols: D, N: 2, Ids: t.ids01, IdsReady: true, Mats: 2, WOff: lw.W1.Off,
			Variant: t.gemvVariant(F, D, 2)}
		if err := q.GemvBF16(gm, t.gate, lw.W1.Block, t.normed); err != nil {
			return err
		}
		gate := devPtr(t.gate)
		return kernel.SwiGLUF32(q, elementwiseGrid(F), elementwiseThreads, gate, gate, gate.Add(int64(F)*4), F)
	}
	if err := firstErr(t.project(q, lw.W1, F, D, n, t.normed, t.gate), t.project(q, lw.W3, F, D, n, t.normed, t.up)); err != nil {
		return err
	}
	return q.SwiGLU(t.gate, t.gate, t.up, n*F)
}

// addNorm enqueues x += add (add may be 0: nothing), out = x/rms(x)·w over n
// rows of t.x.
func (t *Tower) addNorm(q *Queue, out *Block, add kernel.Ptr, w Tensor, n int) error {
	return kernel.TowerAddRMSNorm(q, [3]int{n, 1, 1}, towerRowThreads, devPtr(out), devPtr(t.x), add, tPtr(w), t.g.Dim, t.g.Eps)
}

func firstErrFn(fs ...func() error) error {
	for _, f := range fs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// GatherBF16Rows enqueues dst[i, :] = src[ids[i], :] for n int32 ids over
// BF16 rows of width (the semantic head from LM head rows, once at load); the
// caller guarantees every id is a row of src.
func (q *Queue) GatherBF16Rows(dst, src Tensor, ids *Block, n, width int) error {
	if err := checkFits(ids, 0, int64(n)*4, "bf16 gather ids"); err != nil {
		return err
	}
	if err := dst.fits(int64(n)*int64(width)*2, "bf16 gather destination"); err != nil {
		return err
	}
	return kernel.BF16GatherRows(q, [3]int{n, 1, 1}, elementwiseThreads, tPtr(dst), tPtr(src), devPtr(ids), width)
}

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
	PrefillChunk int // text rows per prefill pass (scratch rows); 0: 64
}

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

	rowsGemm bool // project runs rows as one GEMM (PromptRows, tower_prompt_cuda.go)
}

// NewTower checks the tensors and allocates the tower's device state.
func NewTower(d *Device, w *TowerTensors, opt TowerOptions) (*Tower, error) {
	if err := w.Check(); err != nil {
		return nil, err
	}
	if opt.PrefillChunk == 0 {
		opt.PrefillChunk = 64
	}
	if opt.MaxRows < 1 || opt.MaxRows > TowerMaxRows || opt.PrefillChunk < 1 || opt.PrefillChunk > 65535 {
		return nil, fmt.Errorf("cuda tower: max rows %d must be in [1, %d], prefill chunk %d in [1, 65535]",
			opt.MaxRows, TowerMaxRows, opt.PrefillChunk)
	}
	fuse, err := parseTowerFusion(os.Getenv("PROSCENIUM_GPU_TOWER"))
	if err != nil {
		return nil, fmt.Errorf("cuda tower: %w", err)
	}
	g := w.Geometry
	t := &Tower{d: d, w: w, g: g, opt: opt, fuse: fuse}
	ok := false
	defer func() {
		if !ok {
			t.Close()
		}
	}()
	n, D := int64(opt.PrefillChunk), int64(g.Dim)
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
	t.ctrl = alloc(frameCtrlWords * 4)
	t.kv = alloc(layers * 2 * int64(opt.MaxRows) * int64(g.KVHeads*g.HeadDim) * 4)
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
	t.semantic = alloc(int64(g.Entries[0]+1) * 4)
	t.residual = make([]*Block, len(g.Entries)-1)
	for j := range t.residual {
		t.residual[j] = alloc(int64(g.Entries[j+1]) * 4)
	}
	t.feedback = alloc(D * 4)
	t.fbTables = alloc(int64(len(g.Entries)) * 8)
	t.fbEntries = alloc(int64(len(g.Entries)) * 4)
	t.semTokens = alloc(int64(g.Entries[0]) * 4)
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
	if err := t.Begin(sampling.Settings{TopP: 1}, 0); err != nil {
		return nil, err
	}
	ok = true
	return t, nil
}

// Close frees the tower's device state (not the weights).
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
// stream's work is done (the copy does not queue behind it).
func (t *Tower) writeControl(off int, words []uint32) error {
	if err := t.d.Sync(); err != nil {
		return err
	}
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
			if err := t.layer(q, li, m, in, next); err != nil {
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
func (t *Tower) Frame(q *Queue, hidden Tensor) error {
	g := &t.g
	row, err := hidden.view(int64(g.Dim)*4, "tower hidden row")
	if err != nil {
		return err
	}
	// The semantic head reads the backbone's row, which under exact
	// numerics has the CPU's bits (the numerics contract, docs/MODEL.md):
	// summed in float64 like cpu.MatVec, its logits keep them, so the
	// frame's first draw sees the CPU's logits exactly. Under fast numerics
	// it sums float32 like the tower's own GEMVs.
	sem := Gemv{Rows: g.Entries[0] + 1, Cols: g.Dim, N: 1, Mats: 1, WOff: t.w.SemanticHead.Off,
		Variant: t.gemvVariant(g.Entries[0]+1, g.Dim, 1), F64: q.d.Numerics.Exact()}
	if err := q.GemvBF16(sem, t.semantic, t.w.SemanticHead.Block, row); err != nil {
		return err
	}
	if err := q.SampleLogits(t.semantic, g.Entries[0]+1, 0, g.Entries[0], t.ctrl); err != nil {
		return err
	}
	// Each layer's eh_proj input is made by the launch before it: the first
	// layer's by tower_eh_input, later ones' by the previous layer's out
	// norm (tower_out_eh), whose embedding half, for a code drawn after
	// that layer, the draw writes.
	code0 := ehInput{mode: ehCode, table: t.w.Codebooks[0], entries: g.Entries[0], slot: 0}
	in := code0
	in.h = tPtr(hidden)
	S, L := g.SharedLayers, t.layers()
	for li := 0; li < L; li++ {
		j := li - S + 1 // residual layer j ≥ 1 gives codebook j
		var next *ehInput
		switch {
		case li+1 == L:
		case j < 1: // the next layer embeds code 0 (the shared layers, residual layer 1)
			next = &code0
		default: // the next layer embeds code j, drawn below
			next = &ehInput{mode: ehByDraw}
		}
		if err := t.layer(q, li, 1, in, next); err != nil {
			return err
		}
		in = ehInput{mode: ehMade}
		if j < 1 {
			continue
		}
		if err := t.project(q, t.w.Residual[j-1].Head, g.Entries[j], g.Dim, 1, t.h, t.residual[j-1]); err != nil {
			return err
		}
		var emb *drawEmbed
		if next != nil {
			emb = &drawEmbed{Table: t.w.Codebooks[j], Entries: g.Entries[j], ENorm: t.layerTensors(li + 1).ENorm,
				Dst: devPtr(t.cat), Width: g.Dim, Eps: g.Eps}
		}
		if err := q.sampleLogits(t.residual[j-1], g.Entries[j], j, -1, t.ctrl, nil, 1, emb); err != nil {
			return err
		}
	}
	div := float32(math.Sqrt(float64(len(g.Entries) + 1)))
	if err := kernel.TowerFeedback(q, [3]int{1, 1, 1}, 1024, devPtr(t.feedback), tPtr(t.w.TextEmbed), devPtr(t.semTokens), devPtr(t.fbTables), devPtr(t.fbEntries), devPtr(t.ctrl), len(g.Entries), g.Dim, div); err != nil {
		return err // tower_feedback also steps the counters (1 row, 1 frame)
	}
	return nil
}

// towerRowThreads is a row norm's block (its values in registers:
// kernels/norms.cu ROW_REGS, TowerMaxDim).
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

// project enqueues y[r] = W·x[r] for n rows of x (one GEMV launch; several
// rows share the matrix through the multi-matrix path with every id 0).
func (t *Tower) project(q *Queue, W Tensor, rows, cols, n int, x, y *Block) error {
	if t.rowsGemm && n > 1 {
		if done, err := t.projectRows(q, W, rows, cols, n, x, y); done || err != nil {
			return err
		}
	}
	gm := Gemv{Rows: rows, Cols: cols, N: 1, Mats: 1, WOff: W.Off, Variant: t.gemvVariant(rows, cols, 1)}
	if n > 1 {
		gm.N, gm.Ids, gm.IdsReady, gm.XStride = n, t.zeros, true, cols
	}
	return q.GemvBF16(gm, y, W.Block, x)
}

// ehMode says how a layer's eh_proj input (t.cat: [enorm(E[code]);
// hnorm(h_in)] per row) is made.
type ehMode int

const (
	ehText   ehMode = iota // text rows: the zero embedding
	ehCode                 // an audio row embedding ctrl.codes[slot] of table
	ehByDraw               // the hnorm half only: the draw that picks the code writes the embedding half
	ehMade                 // made already (by the previous layer's out norm and the draw since)
)

// ehInput is a layer's eh_proj input: the mode and, for ehText and ehCode,
// h_in (ignored where the previous layer makes it) and the code's table.
type ehInput struct {
	mode    ehMode
	h       kernel.Ptr
	table   Tensor
	entries int
	slot    int
}

// outEH enqueues tower_out_eh: layer li's out norm into t.h, and the eh_proj
// input of layer li+1 made as next says: tower_out_eh's emode 0 text, 1 a
// code, 2 left to the draw.
func (t *Tower) outEH(q *Queue, li, n int, next *ehInput) error {
	emode, table := 0, kernel.Ptr(0)
	switch next.mode {
	case ehCode:
		emode, table = 1, tPtr(next.table)
	case ehByDraw:
		emode = 2
	}
	g := &t.g
	return kernel.TowerOutEH(q, [3]int{n, 1, 1}, towerRowThreads, devPtr(t.h), devPtr(t.x), devPtr(t.mixed),
		tPtr(t.layerTensors(li).OutNorm), devPtr(t.cat), emode, table, devPtr(t.ctrl), next.slot, next.entries,
		tPtr(t.layerTensors(li+1).ENorm), tPtr(t.layerTensors(li+1).HNorm), g.Dim, g.Eps)
}

// layer enqueues tower layer li over n rows at positions ctrl.pos…, its
// h_out in t.h. in says how its eh_proj input is made: ehText or ehCode by
// its own tower_eh_input from in.h, ehMade by the launches before it. next
// not nil: its out norm also makes layer li+1's input (tower_out_eh; next's
// mode ehText, ehCode or ehByDraw), else it writes t.h alone. One row
// (a frame) turns and caches its key in the attention launch
// (tower_attend_rope); prefill rows take tower_rope_append first, since
// rows of one launch read each other's keys.
func (t *Tower) layer(q *Queue, li, n int, in ehInput, next *ehInput) error {
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
	rows := [3]int{n, 1, 1}
	attnGrid := [3]int{nh, TowerAttnSplits, n}
	return firstErrFn(
		func() error {
			if in.mode == ehMade {
				return nil
			}
			var table kernel.Ptr
			if in.mode == ehCode {
				table = tPtr(in.table)
			}
			return kernel.TowerEHInput(q, rows, towerRowThreads, devPtr(t.cat), in.h, table, devPtr(t.ctrl), in.slot, in.entries, tPtr(lw.ENorm), tPtr(lw.HNorm), D, g.Eps)
		},
		func() error { return t.project(q, lw.EHProj, D, 2*D, n, t.cat, t.x) },
		func() error { return t.addNorm(q, t.normed, 0, lw.AttentionNorm, n) },
		func() error { return t.project(q, lw.WQKV, width, D, n, t.normed, t.qkv) },
		func() error {
			if n == 1 {
				return kernel.TowerAttendRope(q, attnGrid, towerAttnThreads, kernel.TowerAttendRopeArgs{
					Attn: devPtr(t.attn), Qkv: devPtr(t.qkv), Kc: kc, Vc: vc, Ctrl: devPtr(t.ctrl), Part: devPtr(t.attnPart),
					Counters: devPtr(t.attnCount), CosT: cosT, SinT: sinT, Nh: nh, Nkv: nkv, Hd: hd, Half: half, Scale: scale,
					MaxRows: t.opt.MaxRows})
			}
			if err := kernel.TowerRopeAppend(q, rows, elementwiseThreads, devPtr(t.qkv), kc, vc, cosT, sinT, devPtr(t.ctrl), nh, nkv, hd, half, t.opt.MaxRows); err != nil {
				return err
			}
			return kernel.TowerAttend(q, attnGrid, towerAttnThreads, devPtr(t.attn), devPtr(t.qkv), kc, vc, devPtr(t.ctrl), devPtr(t.attnPart), devPtr(t.attnCount), nh, nkv, hd, scale, t.opt.MaxRows)
		},
		func() error { return t.project(q, lw.WO, D, nh*hd, n, t.attn, t.mixed) },
		func() error { return t.addNorm(q, t.normed, devPtr(t.mixed), lw.FFNNorm, n) },
		func() error { return t.gateUp(q, t.frameFusion(n), lw, n) },
		func() error { return t.project(q, lw.W2, D, g.FFN, n, t.gate, t.mixed) },
		func() error {
			if next == nil {
				return t.addNorm(q, t.h, devPtr(t.mixed), lw.OutNorm, n)
			}
			return t.outEH(q, li, n, next)
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
		return kernel.TowerGateUpSwiGLU(q, [3]int{(F + 1) / 2, 1, 1}, towerGemvThreads, devPtr(t.gate), tPtr(lw.W1), tPtr(lw.W3), devPtr(t.normed), F, D)
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

//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"proscenium/engine/drama3"
)

// Backbone runs the Qwen3.5-MoE hybrid on the device (engine/cpu
// Backbone): rows are appended by Prefill (passes of up to BackboneChunk
// rows) or Step (one row, replayed from a CUDA graph captured at the first
// step), and the per-layer states stay on the device between calls. Each
// layer is input norm → mixer → residual → post norm → MoE → residual; the
// residual adds are fused with the norm that follows them. It is not safe
// for concurrent use.
type Backbone struct {
	d    *Device
	W    *DeviceWeights
	Plan *BackbonePlan
	cfg  *drama3.Config
	work *Block
	host *Block // pinned: a step's input row and output row
	// routed (a host tier) is pinned room for a prefill pass's routing read
	// back, its (row, expert) pairs' ids: routed staging (expert_stage_cuda.go).
	routed *Block

	layers []backboneLayer
	embed  Tensor
	final  Tensor
	pos    int
	step   *Graph

	// skip leaves parts out of enqueue (TimeStepParts' profile only).
	skip StepParts

	// Experts is how a prefill runs its routed experts.
	Experts ExpertPath
	// ExpertGroup is the pairs per pass of ExpertsRows (4 or 8; 0: MoERowsGroup).
	ExpertGroup int

	// borrowed: W belongs to another backbone (a take's state beside its
	// take's, Frames.NewTake); Close leaves it.
	borrowed bool
	// Fused makes a one-row step under fast numerics run the fused kernels
	// (fused.go); new backbones take it from $PROSCENIUM_GPU_FUSED. Change
	// it with SetFused, which drops the captured step.
	Fused bool
	// FusedMixers makes a one-row step under fast numerics run the fused
	// step's two mixer kernels (a tail per head) even where Fused is off;
	// new backbones take it from $PROSCENIUM_GPU_FUSED ("mixers" or "1").
	FusedMixers bool

	// The take slots (backbone_rows_cuda.go): the one-take calls (Prefill,
	// Step, Len) address slot; slotPos is each slot's rows.
	slot    int
	slotPos []int
	rows    stepRows

	// in is the host's copy of a prefill's inputs, kept between prefills
	// (passInputs).
	in passHost

	// routes is the routing log (KeepRoutes; nil: none); unlogged: a
	// step was enqueued without it.
	routes   *routeLog
	unlogged bool
	passing  bool // a prefill pass is being enqueued (inPass), not a step
}

type backboneLayer struct {
	inNorm, postNorm Tensor
	dn               *DeltaNetLayer
	at               *AttentionLayer
	dense            Tensor // router, shared gate, shared up, shared_expert_gate: [D, H] BF16
	sharedDown       Tensor
	x                ExpertPack
	xw               *Block // the block a step reads x at: the arena, the stage or host memory (DeviceWeights.Experts)
	layer            int    // the layer's index (DeviceWeights.stageExperts)
	// xr is the expert cache's table and statistics for the layer (a host
	// tier; zero: the experts are at x's offsets in xw): what a step reads.
	xr ExpertRef
}

// BackboneRow is one appended row: a token id, or (Embedding not nil) a
// given input vector of Hidden values such as an audio feedback row.
type BackboneRow struct {
	Token     int
	Embedding []float32
}

// BackboneBytes is the device memory a backbone of layout needs for
// capacity rows: the weight arena and the work block (states and scratch).
// The step graph's own memory is the driver's (kernel nodes, no memory
// nodes): Pool.Admit's headroom covers it with the driver's other needs.
func BackboneBytes(cfg *drama3.Config, layout *WeightLayout, capacity int) (int64, *BackbonePlan, error) {
	return BackboneSlotsBytes(cfg, layout, capacity, 1)
}

// LoadBackbone admits, allocates and loads a checkpoint's backbone for a
// context of capacity rows: the exact bytes (weights, states, scratch) are
// checked against the pool's cap and the device's free memory before
// anything is allocated; then the weights stream into their arena (progress
// as bytes on the device of the total).
func LoadBackbone(d *Device, ck *drama3.Checkpoint, capacity int, progress LoadProgress) (*Backbone, error) {
	return LoadBackboneSlots(d, ck, capacity, 1, progress)
}

// NewBackbone binds the loaded weights, allocates the work block of plan and
// starts with empty state. The backbone owns w once it is returned (Close
// frees it, unless it is a Sibling's); on an error w is left to the caller.
func NewBackbone(d *Device, w *DeviceWeights, plan *BackbonePlan) (*Backbone, error) {
	b := &Backbone{d: d, W: w, Plan: plan, cfg: w.Weights.Config, slotPos: make([]int, max(plan.Slots, 1))}
	b.Fused, b.FusedMixers = fusedFromEnv()
	if err := d.startExpertCache(w, DefaultExpertCacheConfig); err != nil {
		return nil, err
	}
	if err := b.bind(); err != nil {
		return nil, err
	}
	// Every kernel a step launches was looked up when the device opened
	// (Open: kernel.EntryPoints), so a capture does no module lookups.
	var err error
	if b.work, err = d.Alloc(plan.Bytes); err != nil {
		return nil, err
	}
	if b.host, err = d.AllocPinned(int64(2 * plan.H * 4)); err != nil {
		d.Free(b.work)
		return nil, err
	}
	if w.Stage != nil {
		if b.routed, err = d.AllocPinned(int64(plan.Chunk) * int64(plan.K) * 4); err != nil {
			d.Free(b.host)
			d.Free(b.work)
			return nil, err
		}
	}
	for i := range b.layers {
		L := &b.layers[i]
		if L.dn != nil {
			L.dn.State, L.dn.Scratch = b.t(plan.States[i]), b.t(plan.DeltaNetScratch)
		} else {
			L.at.KV, L.at.Scratch = b.t(plan.States[i]), b.t(plan.AttentionScratch)
		}
	}
	if err := b.Reset(); err != nil {
		b.borrowed = true // w stays the caller's: its loader frees it, a sibling's owner keeps it
		b.Close()
		return nil, err
	}
	// Reset zeroed the split-K workspace's counters (stream order: before
	// any GEMM that uses them).
	d.lendGemmSplit(b.t(plan.GemmSplit))
	d.lendGemmXParts(b.t(plan.XRep), plan.XPartsBytes())
	return b, nil
}

// t is the work block at byte offset off.
func (b *Backbone) t(off int64) Tensor { return Tensor{Block: b.work, Off: off} }

// scratch is bytes of the work block at off, as a block for the launches
// that take blocks (never freed: the work block is).
func (b *Backbone) scratch(off int64, bytes int) *Block {
	return &Block{Kind: DeviceMem, Ptr: b.work.Ptr + uintptr(off), Bytes: int64(bytes)}
}

// bind finds every layer's tensors in the arena by their place in the weight tree.
func (b *Backbone) bind() error {
	w := b.W.Weights
	var err error
	get := func(p *drama3.Param) Tensor {
		if err != nil {
			return Tensor{}
		}
		var t Tensor
		t, err = b.W.Tensor(p)
		return t
	}
	b.embed, b.final = get(w.Embed), get(w.FinalNorm)
	p := b.Plan
	for i := range w.Layers {
		L := &w.Layers[i]
		l := backboneLayer{inNorm: get(L.InputNorm), postNorm: get(L.PostAttentionNorm),
			dense: get(L.MoE.Router), sharedDown: get(L.MoE.SharedDown), x: b.W.Layout.Experts[i], xw: b.W.Experts(i), layer: i, xr: b.W.Cache.ref(i)}
		if m := L.Linear; m != nil {
			l.dn = &DeltaNetLayer{G: p.DeltaNet, MaxRows: p.Chunk, Step: defaultDeltaNetStep, W: DeltaNetWeights{
				InQKV: get(m.InProjQKV), InZ: get(m.InProjZ), InB: get(m.InProjB), InA: get(m.InProjA),
				Conv: get(m.Conv1D), DtBias: get(m.DtBias), ALog: get(m.ALog), Norm: get(m.Norm), Out: get(m.OutProj)}}
		} else {
			m := L.Full
			l.at = &AttentionLayer{G: p.Attention, MaxRows: p.Chunk, CoreRows: p.MixerRows(), Capacity: p.Capacity, W: AttentionWeights{
				Q: get(m.QProj), K: get(m.KProj), V: get(m.VProj), O: get(m.OProj), QNorm: get(m.QNorm), KNorm: get(m.KNorm)}}
		}
		// The stacked dense projection reads router, shared gate, shared up
		// and shared_expert_gate as one matrix: the layout put them so.
		sg := get(L.MoE.SharedExpertGate)
		if err == nil && sg.Off != l.dense.Off+int64(p.E+2*p.Is)*int64(p.H)*2 {
			err = fmt.Errorf("gpu backbone: layer %d: router and shared expert projections are not adjacent in the arena", i)
		}
		b.layers = append(b.layers, l)
	}
	return err
}

// Len is the rows appended since the last Reset.
func (b *Backbone) Len() int { return b.pos }

// Hidden is the width of a row.
func (b *Backbone) Hidden() int { return b.Plan.H }

// Reset forgets every row of every slot: states to zero, positions 0.
func (b *Backbone) Reset() error {
	b.pos = 0
	clear(b.slotPos)
	return b.d.Run(func(q *Queue) error {
		if err := b.W.homeStage(q); err != nil { // the stage's decode layer (a host tier)
			return err
		}
		if err := q.ZeroTensor(b.t(0), b.Plan.StateBytes); err != nil {
			return err
		}
		if err := q.ZeroTensor(b.t(b.Plan.Counters), int64(4*b.Plan.CounterWords())); err != nil {
			return err
		}
		if err := q.ZeroTensor(b.t(b.Plan.GemmSplit), gemmSplitCounterBytes); err != nil {
			return err
		}
		return q.ZeroTensor(b.t(b.Plan.Pos), 4*int64(max(b.Plan.Slots, 1)))
	})
}

// Close frees the device memory (weights included).
func (b *Backbone) Close() {
	if b.work != nil {
		b.d.returnGemmSplit(b.t(b.Plan.GemmSplit))
		b.d.returnGemmXParts(b.t(b.Plan.XRep), b.Plan.XPartsBytes())
	}
	if b.step != nil {
		b.d.Do(func() error { b.step.Destroy(); return nil })
	}
	b.closeRows()
	b.closeRoutes()
	for _, p := range []*Block{b.host, b.routed} {
		if p != nil {
			b.d.Free(p)
		}
	}
	if b.work != nil {
		b.d.Free(b.work)
	}
	if !b.borrowed {
		b.W.Free(b.d)
	}
}

// checkRows validates rows and fills toks (−1 for an embedding row) and emb.
func (b *Backbone) checkRows(rows []BackboneRow, toks []int32, emb []float32) error {
	if err := b.rowInputs(rows, toks, emb); err != nil {
		return err
	}
	if b.pos+len(rows) > b.Plan.Capacity {
		return fmt.Errorf("backbone: %d rows after %d exceed the context limit of %d rows", len(rows), b.pos, b.Plan.Capacity)
	}
	return nil
}

// rowInputs validates the rows' tokens and embeddings and fills toks (−1
// for an embedding row) and emb.
func (b *Backbone) rowInputs(rows []BackboneRow, toks []int32, emb []float32) error {
	H := b.Plan.H
	for i, r := range rows {
		if r.Embedding != nil {
			if len(r.Embedding) != H {
				return fmt.Errorf("backbone row %d: embedding has %d values, hidden size is %d", i, len(r.Embedding), H)
			}
			toks[i] = -1
			copy(emb[i*H:], r.Embedding)
			continue
		}
		if err := b.checkToken(r.Token); err != nil {
			return fmt.Errorf("backbone row %d: %w", i, err)
		}
		toks[i] = int32(r.Token)
	}
	return nil
}

// passHost is the host's copy of a prefill's inputs, grown to the longest
// prefill and kept. A 300-row prompt's embedding rows are 2.4 MB at the
// full geometry; made fresh for every prefill (zeroed, its pages faulted in
// again when the runtime had returned them), they were most of the 0.15–0.7
// ms by which the prefill's wall time passed its device time on the H200
// (0.08–0.22 ms with these buffers; docs/PERF.md "host18").
type passHost struct {
	toks []int32
	emb  []float32
}

// passInputs validates rows (checkRows) into the Backbone's kept buffers:
// their tokens (−1 for an embedding row), and, only where some row is an
// embedding, the rows' inputs [len(rows), H] (a token row's left as it
// was: the kernels read Emb only for a row whose token is −1); emb is nil
// for a prompt of tokens. The slices are valid until the next call.
func (b *Backbone) passInputs(rows []BackboneRow) (toks []int32, emb []float32, err error) {
	n, H := len(rows), b.Plan.H
	if cap(b.in.toks) < n {
		b.in.toks = make([]int32, n)
	}
	toks = b.in.toks[:n]
	for _, r := range rows {
		if r.Embedding != nil {
			if cap(b.in.emb) < n*H {
				b.in.emb = make([]float32, n*H)
			}
			emb = b.in.emb[:n*H]
			break
		}
	}
	if err := b.checkRows(rows, toks, emb); err != nil {
		return nil, nil, err
	}
	return toks, emb, nil
}

// checkToken refuses a token id outside the vocabulary.
func (b *Backbone) checkToken(id int) error {
	if V := b.cfg.Text.VocabSize; id < 0 || id >= V {
		return fmt.Errorf("token id %d outside the vocabulary [0, %d)", id, V)
	}
	return nil
}

// Prefill appends rows in passes of up to Plan.Chunk rows and returns their
// final-norm hidden states [len(rows), Hidden]. A bad row changes nothing.
func (b *Backbone) Prefill(rows []BackboneRow) ([]float32, error) {
	out := make([]float32, len(rows)*b.Plan.H)
	if err := b.prefill(rows, out); err != nil {
		return nil, err
	}
	return out, nil
}

// PrefillOnDevice appends rows as Prefill does, leaving the final-norm
// hidden states of the last pass on the device (Plan.Out, the pass's rows
// in order) instead of copying every row back: a take's prompt reads them
// there (the tower's prompt rows, frame 0). The work may still be running
// when it returns. A bad row changes nothing.
func (b *Backbone) PrefillOnDevice(rows []BackboneRow) error { return b.prefill(rows, nil) }

// prefill runs rows through the backbone in passes and copies each pass's
// final-norm hidden states into out, unless out is nil.
func (b *Backbone) prefill(rows []BackboneRow, out []float32) error {
	H := b.Plan.H
	toks, emb, err := b.passInputs(rows)
	if err != nil {
		return err
	}
	for s := 0; s < len(rows); s += b.Plan.Chunk {
		e := min(s+b.Plan.Chunk, len(rows))
		n := e - s
		pos := b.pos
		var passEmb []float32 // (none for a prompt of tokens)
		if emb != nil {
			passEmb = emb[s*H : e*H]
		}
		if err := b.d.Run(func(q *Queue) error {
			if err := b.copyPassInputs(q, toks[s:e], passEmb, n, b.blockPos(n)); err != nil {
				return err
			}
			return b.inPass(n, func() error { return b.enqueue(q, n, pos+n) })
		}); err != nil {
			return err
		}
		if out != nil {
			if err := Download(b.d, out[s*H:e*H], b.work, b.Plan.Out); err != nil {
				return err
			}
		}
		b.pos += n
	}
	return nil
}

// uploadEmbeddings copies a pass's embedding rows (toks −1) to Plan.Emb at
// their rows: the span from the first to the last of them, nothing for a
// pass of tokens (backbone_rows reads Emb only for a row whose token is −1;
// a 300-row text pass would otherwise copy 2.4 MB of zeros).
func (b *Backbone) uploadEmbeddings(toks []int32, emb []float32) error {
	first, end := embeddingSpan(toks)
	if first == end {
		return nil
	}
	H := b.Plan.H
	return Upload(b.d, b.work, b.Plan.Emb+int64(first*H*4), emb[first*H:end*H])
}

// Step appends one row and returns its final-norm hidden state. The first
// step captures the step's launches into a graph; every later step copies
// the row in, replays the graph and copies the result out, with one
// synchronisation at the end.
func (b *Backbone) Step(row BackboneRow) ([]float32, error) {
	H := b.Plan.H
	var tok [1]int32
	emb := unsafe.Slice((*float32)(b.host.Host), 2*H)
	in, out := emb[:H], emb[H:]
	if err := b.checkRows([]BackboneRow{row}, tok[:], in); err != nil {
		return nil, err
	}
	res := make([]float32, H)
	err := b.d.Run(func(q *Queue) error {
		if b.step == nil {
			g, err := q.Capture(func(q *Queue) error { return b.enqueue(q, 1, 0) })
			if err != nil {
				return fmt.Errorf("backbone: capturing the step graph: %w", err)
			}
			b.step = g
		}
		s := q.Stream()
		if err := cu.MemsetD32Async(cu.DevicePtr(b.work.Ptr+uintptr(b.Plan.Toks)), uint(uint32(tok[0])), 1, s); err != nil {
			return err
		}
		if tok[0] < 0 {
			if err := cu.MemcpyHtoDAsync(cu.DevicePtr(b.work.Ptr+uintptr(b.Plan.Emb)), unsafe.Pointer(&in[0]), int64(H*4), s); err != nil {
				return err
			}
		}
		if err := q.LaunchGraph(b.step); err != nil {
			return err
		}
		if err := b.W.Cache.tick(q); err != nil {
			return err
		}
		if err := cu.MemcpyDtoHAsync(unsafe.Pointer(&out[0]), cu.DevicePtr(b.work.Ptr+uintptr(b.Plan.Out)), int64(H*4), s); err != nil {
			return err
		}
		return s.Synchronize()
	})
	if err != nil {
		return nil, err
	}
	copy(res, out)
	b.pos++
	return res, nil
}

// enqueue puts the forward of n rows (inputs in Toks/Emb) on the stream:
// embedding, the layers, the final norm into Out, and the position advanced
// by n. maxLen bounds the cached rows attention reads (0: the capacity, for
// a captured step whose position varies).
func (b *Backbone) enqueue(q *Queue, n, maxLen int) error {
	eps, err := b.enqueueEntry(q, n)
	if err != nil {
		return err
	}
	pos := b.posTensor()
	fused := n == 1 && b.fusedStep()
	tails := n == 1 && !b.d.Numerics.Exact() && (b.Fused || b.FusedMixers)
	for i := range b.layers {
		if err := b.layerForward(q, i, n, pos, maxLen, eps, fused, tails); err != nil {
			return err
		}
	}
	return q.AddInt32(pos, n)
}

// layerForward enqueues layer i of a forward of n rows (enqueue's flags):
// its mixer, then its feed-forward, which leaves the next layer's input
// norm or the final norm (afterLayer).
func (b *Backbone) layerForward(q *Queue, i, n int, pos Tensor, maxLen int, eps float32, fused, tails bool) error {
	L := &b.layers[i]
	if err := b.mixer(q, L, n, pos, maxLen, eps, fused, tails); err != nil {
		return fmt.Errorf("layer %d: %w", i, err)
	}
	if b.skip&StepMoE != 0 {
		return nil
	}
	next, dst := b.afterLayer(i)
	var err error
	if fused {
		err = b.moeFused(q, L, next, dst, eps)
	} else {
		err = b.moe(q, L, n, next, dst, eps)
	}
	if err != nil {
		return fmt.Errorf("layer %d: %w", i, err)
	}
	return nil
}

// enqueueEntry enqueues what every forward of n rows begins with: the rows'
// embeddings (tokens or given rows, Toks/Emb) into X and layer 0's input norm
// into NormedMix. It returns the norms' epsilon.
func (b *Backbone) enqueueEntry(q *Queue, n int) (eps float32, err error) {
	p := b.Plan
	H := p.H
	x := b.scratch(p.X, n*H*4)
	emb, _ := b.embed.view(int64(b.cfg.Text.VocabSize)*int64(H)*2, "embed")
	if err := q.BackboneRows(x, emb, b.scratch(p.Toks, n*4), b.scratch(p.Emb, n*H*4), n, b.cfg.Text.VocabSize, H); err != nil {
		return 0, err
	}
	eps = float32(b.cfg.Text.RMSNormEps)
	w0, _ := b.layers[0].inNorm.view(int64(H*4), "input norm")
	return eps, q.AddRMSNormZC(x, nil, b.scratch(p.NormedMix, n*H*4), w0, n, H, H, eps)
}

// afterLayer is where layer i's feed-forward leaves its result: the next
// layer's input norm into NormedMix, or after the last layer the final norm
// into Out.
func (b *Backbone) afterLayer(i int) (next, dst Tensor) {
	if i+1 < len(b.layers) {
		return b.layers[i+1].inNorm, b.t(b.Plan.NormedMix)
	}
	return b.final, b.t(b.Plan.Out)
}

// mixer enqueues layer L's mixer of the n rows in NormedMix, adds its output
// (MixOut) to X and writes the post norm of the result into NormedMoE; fused,
// the output projection, add and norm are one launch (OutAddNorm); with
// tails, the mixer's kernels with a tail per head (fused.go).
func (b *Backbone) mixer(q *Queue, L *backboneLayer, n int, pos Tensor, maxLen int, eps float32, fused, tails bool) error {
	p := b.Plan
	H := p.H
	mix := b.t(p.MixOut)
	x, mixOut, normed := b.scratch(p.X, n*H*4), b.scratch(p.MixOut, n*H*4), b.scratch(p.NormedMoE, n*p.Hp*4)
	pw, err := L.postNorm.view(int64(H*4), "post norm")
	if err != nil {
		return err
	}
	if b.skip&StepMixers == 0 {
		var heads, dec *Block // the per-head tail counters of the fused mixer kernels; the decode attention's
		if tails {
			heads = b.scratch(p.Counters+4*counterHeads, 4*p.headCounters())
		}
		if n == 1 {
			dec = b.scratch(p.Counters+4*counterHeads, 4*p.headCounters())
		}
		o, err := b.passMixer(q, L, n, b.attentionPos(pos, n), maxLen, heads, dec)
		if err != nil {
			return err
		}
		if fused {
			W, err := o.W.view(int64(o.Hidden)*int64(o.Cols)*2, "output projection")
			if err != nil {
				return err
			}
			in, err := o.In.view(int64(o.Cols)*4, "output projection x")
			if err != nil {
				return err
			}
			return q.OutAddNorm(mixOut, W, in, x, normed, pw, b.counter(counterAddNorm), H, o.Cols, p.Hp, eps)
		}
		if err := o.project(q, mix, n); err != nil {
			return err
		}
	}
	return q.AddRMSNormZC(x, mixOut, normed, pw, n, H, p.Hp, eps)
}

// counter is the fused step's tail counter i (fused.go).
func (b *Backbone) counter(i int) *Block { return b.scratch(b.Plan.Counters+int64(4*i), 4) }

// fusedStep reports whether a one-row step runs the fused kernels: Fused,
// under fast numerics (the exact step keeps its launches and bits).
func (b *Backbone) fusedStep() bool { return b.Fused && !b.d.Numerics.Exact() }

// moeFused is moe for a step of the fused kernels: the dense projection with
// the routing (DenseRoute), the experts' gate and up (one gathered GEMV), the
// down projections with the combine, residual and next norm (MoEDownCombine).
func (b *Backbone) moeFused(q *Queue, L *backboneLayer, next, dst Tensor, eps float32) error {
	p, x := b.Plan, L.x
	view := b.scratch
	W, err := L.dense.view(int64(p.D*p.H*2), "moe dense")
	if err != nil {
		return err
	}
	ids, wts, dense, in := view(p.Ids, p.K*4), view(p.Wts, p.K*4), view(p.Dense, p.D*4), view(p.NormedMoE, p.Hp*4)
	if err := q.DenseRoute(dense, W, in, ids, wts, b.counter(counterRoute), p.D, p.H, p.E, p.K); err != nil {
		return err
	}
	if err := b.logRoutes(q, L.layer, 1, ids, dense); err != nil {
		return err
	}
	gu := view(p.GU, p.K*2*p.P*4)
	if err := b.gateUpGEMV(q, L.x, L.xw, L.xr, 1, ids, gu, in, 0); err != nil {
		return err
	}
	Ws, err := L.sharedDown.view(int64(p.H*p.Is*2), "shared down")
	if err != nil {
		return err
	}
	nw, err := next.view(int64(p.H*4), "norm")
	if err != nil {
		return err
	}
	// The experts are read in place, from the arena or host memory (L.xw),
	// as the unfused step reads them.
	return q.MoEDownCombine(DownCombine{Yr: view(p.YR, (p.K+1)*p.H*4), W: L.xw, S: L.xw, WOff: x.Down, SOff: x.DownS,
		FP8: x.FP8, Experts: p.E, Ids: ids, GU: gu, P: p.P, I: p.I, Ip: p.Ip, K: p.K, Ws: Ws, Dense: dense, SharedCol: p.E,
		Is: p.Is, H: p.H, X: view(p.X, p.H*4), Wts: wts, SGCol: p.E + 2*p.Is, Normed: &Block{Kind: DeviceMem, Ptr: dst.addr(), Bytes: int64(p.H * 4)},
		NW: nw, NPitch: p.H, Eps: eps, Counter: b.counter(counterCombine), XR: L.xr})
}

// moe enqueues layer L's feed-forward of the n rows in NormedMoE, adds it to
// X and writes the norm (gain next) of the result into dst (engine/cpu
// moeForward, then the next layer's input norm or the final norm).
func (b *Backbone) moe(q *Queue, L *backboneLayer, n int, next, dst Tensor, eps float32) error {
	p, x := b.Plan, L.x
	view := b.scratch
	nk := n * p.K
	dense := view(p.Dense, n*p.D*4)
	if n == 1 {
		W, _ := L.dense.view(int64(p.D*p.H*2), "moe dense")
		g := q.backboneGemv(Gemv{Rows: p.D, Cols: p.H, N: 1, Mats: 1}, false, siteDense)
		if err := q.GemvBF16(g, dense, W, view(p.NormedMoE, p.Hp*4)); err != nil {
			return err
		}
	} else if b.rows.capturing { // a B-row step: the router and shared expert read once for the rows
		if err := q.rowsProjection(b.t(p.Dense), p.D, 0, L.dense, b.t(p.NormedMoE), p.Hp, n, p.D, p.H, siteDense); err != nil {
			return err
		}
	} else if err := q.GemmBF16(Gemm{N: n, Rows: p.D, Cols: p.H, XStride: p.Hp}, b.t(p.Dense), L.dense, b.t(p.NormedMoE)); err != nil {
		return err
	}
	ids, wts := view(p.Ids, nk*4), view(p.Wts, nk*4)
	h, hs := view(p.Hid, nk*p.Ip*4), view(p.HidS, n*p.Is*4)
	gu, yr := view(p.GU, nk*2*p.P*4), view(p.YR, nk*p.H*4)
	var slot *Block
	ys := view(p.YS, n*p.H*4)
	xw := L.xw
	// A prefill pass reads the layer as laid out, unless the expert cache
	// moved some of its experts: then each (row, expert) pair through the
	// cache's table, as a step reads them (xr; zero: as laid out).
	var xr ExpertRef
	if n > 1 && !b.rows.capturing && !b.W.Cache.intact(L.layer) {
		xr = L.xr
	}
	// A prefill pass of a host layer reads its experts from the stage
	// (expert_stage_cuda.go): each expert crosses the bus once a pass instead
	// of once per (row, expert) pair. Where the stage holds the whole layer
	// already (the second part of a split pass), no copy at all; the home
	// layer is staged whole, for the decode steps; otherwise, where routed
	// staging pays, the experts the rows route to once they are routed
	// (routed, below), or else the whole layer in one copy where its pairs
	// would read as many bytes, or each pair's expert in place. (A step
	// reads its k experts over the bus in place: a copy of all would cost
	// E/k times more; a captured B-row step too: what the stage holds is
	// tracked as work is enqueued, not replayed.)
	routed := false
	if x.Host && n > 1 && !b.rows.capturing {
		var err error
		switch {
		case b.W.stageHoldsAll(L.layer):
			xw = b.W.Stage
		case L.layer != b.W.home && xr.Table == 0 && b.W.routedStaging(x, n, p.K):
			routed = true
		case L.layer == b.W.home || stagePass(x, n, p.K):
			xw, err = b.W.stageExperts(q, L.layer)
		}
		if err != nil {
			return err
		}
	}
	// stage stages the routed experts once ids holds the pass's routing.
	stage := func() error {
		if !routed {
			return nil
		}
		var err error
		xw, err = b.stageRoutedExperts(q, L, ids, nk)
		return err
	}
	sharedDone := n == 1 // the shared expert's down projection ran with the routed ones
	path := b.Experts
	if b.rows.capturing {
		path = b.rows.Experts
		if path == ExpertsAuto {
			path = ExpertsGEMV // the step's gathered GEMVs (measured faster than moe_rows for B rows)
		}
	}
	if path == ExpertsAuto {
		path = defaultExperts(b.d.Numerics.Exact(), nk, p.E)
	}
	if xr.Table != 0 {
		path = ExpertsGEMV
	}
	switch {
	case n == 1:
		// A step: the routing with gate and up of the k experts in one
		// gathered GEMV, then their down projections and the shared
		// expert's in one launch.
		if _, err := b.routeGateUp(q, L, xw, 1, ids, wts, dense, gu); err != nil {
			return err
		}
		if err := b.logRoutes(q, L.layer, 1, ids, dense); err != nil {
			return err
		}
		Ws, _ := L.sharedDown.view(int64(p.H*p.Is*2), "shared down")
		yk := view(p.YR, (p.K+1)*p.H*4)
		if err := q.MoEDown(yk, xw, xw, x.Down, x.DownS, x.FP8, p.E, ids, gu, p.P, p.I, p.Ip, p.K, Ws, dense, p.E, p.Is, p.H, L.xr); err != nil {
			return err
		}
		ys = view(p.YR+int64(p.K*p.H*4), p.H*4)
	case b.rows.capturing && path == ExpertsGEMV:
		// A B-row step: as a step, the rows' routing and pairs through one
		// gathered gate·up GEMV, then every row's down projections and
		// shared expert in one launch (MoEDownRows).
		idsBefore, err := b.routeGateUp(q, L, xw, n, ids, wts, dense, gu)
		if err != nil {
			return err
		}
		if err := b.logRoutes(q, L.layer, n, ids, dense); err != nil {
			return err
		}
		Ws, _ := L.sharedDown.view(int64(p.H*p.Is*2), "shared down")
		if err := q.moeDownRows(idsBefore, yr, ys, xw, xw, x.Down, x.DownS, x.FP8, p.E, ids, gu, p.P, p.I, p.Ip, p.K, Ws, dense, p.D, p.E, p.Is, p.H, n, L.xr); err != nil {
			return err
		}
		sharedDone = true
	case path == ExpertsGrouped:
		// Prefill: the (row, expert) pairs sorted by expert through the
		// grouped GEMMs (exact: float64; fast: the BF16 tensor cores), each
		// used expert's weights read once a pass.
		if err := q.MoERoute(ids, wts, dense, n, p.D, p.E, p.K, nil, nil, p.Hp); err != nil {
			return err
		}
		if err := b.logRoutes(q, L.layer, n, ids, dense); err != nil {
			return err
		}
		if err := stage(); err != nil {
			return err
		}
		slot = view(p.Slot, nk*4)
		if err := q.MoEGroup(view(p.Offsets, (p.E+1)*4), view(p.RowIds, nk*4), slot, ids, nk, p.K, p.E); err != nil {
			return err
		}
		// The per-pair path's replicated rows (XRep) are free here: the
		// streamed experts' X parts take them (GemmFP8Grouped).
		xrep, xrepBytes := b.t(p.XRep), int64(p.Chunk)*int64(p.K)*int64(p.Hp)*4
		gemm := func(g Gemm, y, w, s, xin Tensor) error {
			if x.FP8 {
				return q.GemmFP8Grouped(g, y, w, s, xin, xrep, xrepBytes)
			}
			return q.GemmBF16(g, y, w, xin)
		}
		at := func(off int64) Tensor { return Tensor{Block: xw, Off: off} }
		g := Gemm{N: nk, Rows: 2 * p.P, Cols: p.Hp, XStride: p.Hp, Groups: p.E, Offsets: b.t(p.Offsets), RowIds: b.t(p.RowIds),
			XRows: n, MaxGroupRows: n, Mats: p.E}
		if err := gemm(g, b.t(p.GU), at(x.GateUp), at(x.GateUpS), b.t(p.NormedMoE)); err != nil {
			return err
		}
		// The down projection's input: in a long pass whose down the
		// streamed kernels take, their prep makes each pair's SwiGLU
		// itself (no h; MoESwiGLU then runs the shared expert's rows
		// alone).
		g = Gemm{N: nk, Rows: p.H, Cols: p.Ip, Groups: p.E, Offsets: b.t(p.Offsets), MaxGroupRows: n, Mats: p.E}
		down, fused, err := q.gemmStreamFor(g, xrepBytes)
		if err = firstErr(err, GemmStreamSwiGLUSetting(gemmStreamSwiGLU)); err != nil {
			return err
		}
		fused = fused && x.FP8 && p.Ip <= 2*p.P && p.P%8 == 0 && streamSwiGLU(n)
		items := nk
		if fused {
			items = 0
		}
		if err := q.MoESwiGLU(h, gu, p.P, p.I, p.Ip, items, hs, dense, n, p.D, p.E, p.Is, p.Is); err != nil {
			return err
		}
		// The shared expert's down projection next, while the X-parts
		// scratch holds the parts MoESwiGLU wrote of its input (the
		// streamed experts' prep writes the scratch).
		if err := q.GemmBF16(Gemm{N: n, Rows: p.H, Cols: p.Is}, b.t(p.YS), L.sharedDown, b.t(p.HidS)); err != nil {
			return err
		}
		sharedDone = true
		if fused {
			err = q.GemmStreamFP8SwiGLU(down, g, b.t(p.YR), at(x.Down), at(x.DownS), b.t(p.GU), p.P, p.I, xrep)
		} else {
			err = gemm(g, b.t(p.YR), at(x.Down), at(x.DownS), b.t(p.Hid))
		}
		if err != nil {
			return err
		}
	case path == ExpertsRows:
		// Prefill: the pairs sorted by expert as for the grouped GEMMs, each
		// expert's weights read once per group of its pairs by multi-row GEMVs.
		if err := q.MoERoute(ids, wts, dense, n, p.D, p.E, p.K, nil, nil, p.Hp); err != nil {
			return err
		}
		if err := b.logRoutes(q, L.layer, n, ids, dense); err != nil {
			return err
		}
		if err := stage(); err != nil {
			return err
		}
		slot = view(p.Slot, nk*4)
		offsets, rowids := view(p.Offsets, (p.E+1)*4), view(p.RowIds, nk*4)
		if err := q.MoEGroup(offsets, rowids, slot, ids, nk, p.K, p.E); err != nil {
			return err
		}
		group := b.ExpertGroup
		if group == 0 {
			group = MoERowsGroup(nk, p.E)
		}
		m := MoERows{Rows: 2 * p.P, Cols: p.Hp, E: p.E, Pairs: nk, XRows: n, XStride: p.Hp, Group: group,
			WOff: x.GateUp, SOff: x.GateUpS, FP8: x.FP8, Offsets: offsets, RowIds: rowids}
		if err := q.MoERowsGEMV(m, gu, xw, xw, view(p.NormedMoE, n*p.Hp*4)); err != nil {
			return err
		}
		if err := q.MoESwiGLU(h, gu, p.P, p.I, p.Ip, nk, hs, dense, n, p.D, p.E, p.Is, p.Is); err != nil {
			return err
		}
		m = MoERows{Rows: p.H, Cols: p.Ip, E: p.E, Pairs: nk, XStride: p.Ip, Group: group,
			WOff: x.Down, SOff: x.DownS, FP8: x.FP8, Offsets: offsets}
		if err := q.MoERowsGEMV(m, yr, xw, xw, h); err != nil {
			return err
		}
	default:
		// Prefill with the experts as gathered GEMVs, one (row, expert) pair per grid row.
		xrep := view(p.XRep, nk*p.Hp*4)
		if err := q.MoERoute(ids, wts, dense, n, p.D, p.E, p.K, xrep, view(p.NormedMoE, n*p.Hp*4), p.Hp); err != nil {
			return err
		}
		if err := b.logRoutes(q, L.layer, n, ids, dense); err != nil {
			return err
		}
		if err := stage(); err != nil {
			return err
		}
		if err := b.gateUpGEMV(q, x, xw, xr, n, ids, gu, xrep, p.Hp); err != nil {
			return err
		}
		if err := q.MoESwiGLU(h, gu, p.P, p.I, p.Ip, nk, hs, dense, n, p.D, p.E, p.Is, p.Is); err != nil {
			return err
		}
		g := q.backboneGemv(Gemv{Rows: p.H, Cols: p.Ip, N: nk, Ids: ids, Mats: p.E, WOff: x.Down, SOff: x.DownS,
			XStride: p.Ip, Table: xr.down()}, x.FP8, siteOther)
		var err error
		if x.FP8 {
			err = q.GemvFP8(g, yr, xw, xw, h)
		} else {
			err = q.GemvBF16(g, yr, xw, h)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case sharedDone:
	case b.rows.capturing:
		if err := q.rowsProjection(b.t(p.YS), p.H, 0, L.sharedDown, b.t(p.HidS), p.Is, n, p.H, p.Is, siteOther); err != nil {
			return err
		}
	default:
		if err := q.GemmBF16(Gemm{N: n, Rows: p.H, Cols: p.Is}, b.t(p.YS), L.sharedDown, b.t(p.HidS)); err != nil {
			return err
		}
	}
	nw, _ := next.view(int64(p.H*4), "norm")
	normed := &Block{Kind: DeviceMem, Ptr: dst.addr(), Bytes: int64(n * p.H * 4)}
	return q.MoECombineNorm(view(p.X, n*p.H*4), yr, wts, ys, dense, n, p.D, p.E+2*p.Is, p.H, p.K, slot, normed, nw, p.H, eps)
}

// defaultDeltaNetStep is the one-row DeltaNet kernels a backbone starts
// with: the split kernels measured 0.05 to 0.1 ms faster per step at the
// full geometry (docs/PERF.md, "GPU backbone").
const defaultDeltaNetStep = DeltaNetSplitStep

// SetDeltaNetStep picks the DeltaNet layers' one-row kernels for later
// steps and drops the captured step graph, so the next Step captures them.
func (b *Backbone) SetDeltaNetStep(s DeltaNetStep) {
	for i := range b.layers {
		if dn := b.layers[i].dn; dn != nil {
			dn.Step = s
		}
	}
	b.dropStep()
}

// SetFused turns the fused step on or off (Fused) and drops the captured
// step graph, so the next Step captures the choice.
func (b *Backbone) SetFused(on bool) {
	b.Fused = on
	b.dropStep()
}

// dropStep destroys the captured step graph.
func (b *Backbone) dropStep() {
	if b.step != nil {
		b.d.Do(func() error { b.step.Destroy(); return nil })
		b.step = nil
	}
}

// StepLaunches is the kernel launches of the captured step graph (0 before
// the first Step captures it).
func (b *Backbone) StepLaunches() int {
	if b.step == nil {
		return 0
	}
	return b.step.Kernels()
}

// TimeSteps replays the captured step graph n times back to back and returns
// the device milliseconds per replay (a benchmark: the inputs stay as the last
// step left them, and the position advances by n, so n rows of the context
// limit must be free; Reset afterwards).
func (b *Backbone) TimeSteps(n int) (float64, error) {
	if b.step == nil {
		return 0, fmt.Errorf("backbone: no step captured yet")
	}
	if b.pos+n > b.Plan.Capacity {
		return 0, fmt.Errorf("backbone: %d timed steps after %d rows exceed the context limit of %d", n, b.pos, b.Plan.Capacity)
	}
	ms, err := b.timeReplays(b.step, n)
	b.pos += n
	return ms, err
}

// timeReplays launches g times times back to back and returns the device
// milliseconds per launch.
func (b *Backbone) timeReplays(g *Graph, times int) (float64, error) {
	ms, err := b.d.Time(func(q *Queue) error {
		for i := 0; i < times; i++ {
			if err := q.LaunchGraph(g); err != nil {
				return err
			}
		}
		return nil
	})
	return ms / float64(times), err
}

// routeGateUp enqueues the routing of a step's n rows (logits in dense, the
// inputs in NormedMoE) and the gate·up projections of their n·k pairs into
// gu: one launch where the GEMV instance has the routing compiled in front
// (Queue.MoEGateUpRoute), else MoERoute and the gathered GEMV (for n > 1
// on XRep's copies of each row per pair). ids and wts get the routing. The
// experts are read from xw as laid out, or where the layer's expert cache
// table says (L.xr), either way. idsBefore: the ids are moe_route's, a
// launch before a gate·up by ids (MoEGateUpRoute's split path), so the
// launch after it may read them before its PDL wait (moeDownRows).
func (b *Backbone) routeGateUp(q *Queue, L *backboneLayer, xw *Block, n int, ids, wts, dense, gu *Block) (idsBefore bool, err error) {
	p, x := b.Plan, L.x
	in := b.scratch(p.NormedMoE, n*p.Hp*4)
	g := b.gateUpGemv(q, L, n, ids)
	var S *Block
	if x.FP8 {
		S = xw
	}
	if ok, err := q.MoEGateUpRoute(g, gu, ids, wts, dense, n, p.D, p.E, p.K, xw, S, in, p.Hp); ok || err != nil {
		return ok && routeSplit(n), err
	}
	if n == 1 {
		if err := q.MoERoute(ids, wts, dense, 1, p.D, p.E, p.K, nil, nil, p.Hp); err != nil {
			return false, err
		}
		return false, b.gateUpGEMV(q, x, xw, L.xr, 1, ids, gu, in, 0)
	}
	xrep := b.scratch(p.XRep, n*p.K*p.Hp*4)
	if err := q.MoERoute(ids, wts, dense, n, p.D, p.E, p.K, xrep, in, p.Hp); err != nil {
		return false, err
	}
	return false, b.gateUpGEMV(q, x, xw, L.xr, n, ids, gu, xrep, p.Hp)
}

// gateUpGemv is the gathered gate·up projection of a step's n rows' pairs
// (experts by ids, through the layer's expert table where it has one) under
// the device's numerics.
func (b *Backbone) gateUpGemv(q *Queue, L *backboneLayer, n int, ids *Block) Gemv {
	p, x := b.Plan, L.x
	return q.backboneGemv(Gemv{Rows: 2 * p.P, Cols: p.Hp, N: n * p.K, Ids: ids, Mats: p.E, WOff: x.GateUp, SOff: x.GateUpS,
		Table: L.xr.gateUp()}, x.FP8, siteOther)
}

// routesInGateUp reports whether a step of n rows routes layer L inside its
// gate·up launch (MoEGateUpRoute) rather than in a launch of its own.
func (b *Backbone) routesInGateUp(q *Queue, L *backboneLayer, n int) bool {
	return routedGateUp(b.gateUpGemv(q, L, n, nil).Variant, L.x.FP8, b.d.Numerics.Exact())
}

// gateUpGEMV runs the gate and up projections of n·k (row, expert) pairs
// as one gathered GEMV over x (pitch xstride between pairs; 0: one shared
// row), the layer's experts x read from xw, or where xr's table says.
func (b *Backbone) gateUpGEMV(q *Queue, x ExpertPack, xw *Block, xr ExpertRef, n int, ids, gu, xin *Block, xstride int) error {
	p := b.Plan
	nk := n * p.K
	g := q.backboneGemv(Gemv{Rows: 2 * p.P, Cols: p.Hp, N: nk, Ids: ids, Mats: p.E, WOff: x.GateUp, SOff: x.GateUpS,
		XStride: xstride, Table: xr.gateUp()}, x.FP8, siteOther)
	if x.FP8 {
		return q.GemvFP8(g, gu, xw, xw, xin)
	}
	return q.GemvBF16(g, gu, xw, xin)
}

// ProfileStep replays the captured step graph once inside a profiler range
// (Device.ProfileRange), for a per-kernel profile of a step under ncu. The
// position advances by one.
func (b *Backbone) ProfileStep() error {
	if b.step == nil {
		return fmt.Errorf("backbone: no step captured yet")
	}
	if b.pos+1 > b.Plan.Capacity {
		return fmt.Errorf("backbone: a profiled step after %d rows exceeds the context limit of %d", b.pos, b.Plan.Capacity)
	}
	err := b.d.ProfileRange(func(q *Queue) error { return q.LaunchGraph(b.step) })
	b.pos++
	return err
}

// ProfilePrefill is one Prefill pass (at most Plan.Chunk rows) with its
// launches inside a profiler range (Device.ProfileRange), so that ncu
// --profile-from-start off times every kernel of a prefill and nothing
// else. The rows are appended as Prefill appends them.
func (b *Backbone) ProfilePrefill(rows []BackboneRow) error {
	if len(rows) > b.Plan.Chunk {
		return fmt.Errorf("backbone: a profiled prefill of %d rows is more than one pass of %d", len(rows), b.Plan.Chunk)
	}
	toks, emb, err := b.passInputs(rows)
	if err != nil {
		return err
	}
	n, pos := len(rows), b.pos
	if err := b.uploadPass(toks, emb, n); err != nil {
		return err
	}
	if err := b.d.ProfileRange(func(q *Queue) error { return b.inPass(n, func() error { return b.enqueue(q, n, pos+n) }) }); err != nil {
		return err
	}
	b.pos += n
	return nil
}

// StepParts selects parts of a decode step for a profile.
type StepParts int

const (
	StepMixers StepParts = 1 << iota // the DeltaNet and attention mixers
	StepMoE                          // the feed-forward (dense projection, routing, experts, combine)
)

// TimeStepParts captures a step graph without the parts in skip and returns
// the device milliseconds per replay over n replays (a profile of where a
// step's time goes; the state it leaves is meaningless: Reset afterwards).
func (b *Backbone) TimeStepParts(skip StepParts, n int) (float64, error) {
	return b.timeParts(skip, n, func(q *Queue) error { return b.enqueue(q, 1, 0) })
}

// timeParts captures enqueue's graph with b.skip = skip, Resets the backbone
// and returns the device milliseconds per replay over times replays.
func (b *Backbone) timeParts(skip StepParts, times int, enqueue func(q *Queue) error) (float64, error) {
	var g *Graph
	b.skip = skip
	err := b.d.Run(func(q *Queue) (err error) {
		g, err = q.Capture(enqueue)
		return err
	})
	b.skip = 0
	if err != nil {
		return 0, err
	}
	defer b.d.Do(func() error { g.Destroy(); return nil })
	if err := b.Reset(); err != nil {
		return 0, err
	}
	return b.timeReplays(g, times)
}

// defaultExperts is the path ExpertsAuto takes for a prefill pass of pairs
// (row, expert) pairs over experts experts. Fast numerics: the grouped
// GEMMs on the BF16 tensor cores (each used expert's weights read once a
// pass) from groupedMinPairs pairs an expert on average, per-pair GEMVs
// (each pair re-reading its expert) below. Exact: per-pair GEMVs, measured
// faster than the float64 grouped GEMMs and the multi-row GEMVs for a 60-row
// prefill at the full geometry (45 against 82 and 69 ms, docs/PERF.md "GPU
// backbone").
func defaultExperts(exact bool, pairs, experts int) ExpertPath {
	if !exact && float64(pairs) >= groupedMinPairs*float64(experts) {
		return ExpertsGrouped
	}
	return ExpertsGEMV
}

// groupedMinPairs is the mean (row, expert) pairs an expert from which a
// fast prefill pass runs its experts as grouped GEMMs (each used expert
// read once) rather than per-pair GEMVs (an expert read per pair).
// Measured with the grouped28 GEMM (docs/PERF.md, session 9), fast, full
// geometry, a whole prefill grouped against per-pair: 32 rows (1.0 an
// expert) 21.5 against 21.0 ms, 48 rows (1.5) 26.2 against 27.9, 60 rows
// (1.9) 28.1 against 33.2.
const groupedMinPairs = 1.25

// ExpertPath is how a prefill runs its routed experts (a step always runs
// them as gathered GEMVs).
type ExpertPath int

const (
	// ExpertsAuto: defaultExperts.
	ExpertsAuto ExpertPath = iota
	// ExpertsGrouped: the (row, expert) pairs sorted by expert, each used
	// expert's matrices read once a pass by the grouped GEMMs (float64
	// under exact, the BF16 tensor cores under fast).
	ExpertsGrouped
	// ExpertsGEMV: one gathered GEMV per (row, expert) pair.
	ExpertsGEMV
	// ExpertsRows: the pairs sorted by expert as for ExpertsGrouped, each
	// expert's matrices read once per group of its pairs by multi-row
	// gathered GEMVs (kernels/moe_rows.cu).
	ExpertsRows
)

// String names the path as the tests and benchmarks report it.
func (e ExpertPath) String() string {
	switch e {
	case ExpertsAuto:
		return fmt.Sprintf("auto (fast: grouped GEMMs from %g pairs an expert, else per-pair GEMVs)", groupedMinPairs)
	case ExpertsGrouped:
		return "grouped GEMMs"
	case ExpertsGEMV:
		return "per-pair GEMVs"
	case ExpertsRows:
		return "multi-row GEMVs"
	}
	return fmt.Sprintf("expert path %d", int(e))
}

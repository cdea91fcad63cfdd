package cuda

import (
	"fmt"
	"unsafe"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// This file lays the bound checkpoint tensors out in one device arena:
// where every stored tensor lands, in what form, and the bytes the arena
// needs. It calls no driver, so the layout is tested without a GPU.
//
// Forms on the device:
//   - matrices stay as stored (BF16 stays BF16);
//   - 1-D tensors (norm gains, dt_bias, A_log) and the conv1d kernels are
//     widened to float32 (the kernels read them as float32);
//   - routed experts are packed per layer as the gathered GEMV reads them:
//     gate_up [E][2P][Hp] (gate rows 0…I−1, up rows P…P+I−1, the rest zero)
//     and down [E][H][Ip], FP8 with float32 block scales [E][⌈2P/128⌉][⌈Hp/128⌉]
//     and [E][⌈H/128⌉][⌈Ip/128⌉], or BF16 without scales. Hp and Ip are the
//     widths rounded up to 16 for FP8 (the GEMV reads 16-byte chunks), 8 for
//     BF16; the padding is zero, and so are the padded columns of the
//     activations fed to it. P is I, except for FP8 stored per expert, where
//     it is I rounded up to 128: gate and up have their own scale blocks, so
//     up must start a block. Fused FP8 gate_up already is one [2I, H] matrix
//     per expert whose scale blocks run over gate then up, as the kernels
//     read it (P = I).
//   - matrices one GEMV reads together are adjacent: the router, the shared
//     expert's gate and up projections and shared_expert_gate (one GEMV of
//     E + 2·Is + 1 rows); the DeltaNet's in_proj qkv, z, b, a; attention q, k, v.

// arenaAlign is the alignment of every tensor group in the arena.
const arenaAlign = 256

// DeviceTensor is one stored tensor's place in the arena, or with Host in
// the block of dense tensors in host memory (WeightLayout.HostDenseBytes).
type DeviceTensor struct {
	Off   int64            // byte offset in the arena (or the host block)
	DType checkpoint.DType // as on the device: the stored type, or F32 when widened
	Shape []int            // the stored shape
	Host  bool
}

// Bytes is the tensor's size on the device.
func (t DeviceTensor) Bytes() int64 {
	n := int64(t.DType.Size())
	for _, d := range t.Shape {
		n *= int64(d)
	}
	return n
}

// ExpertPack is one layer's routed experts as the gathered GEMV reads them.
// A pack in host memory (Host, LayoutWeightsTier) has its offsets in its
// own block of SpanBytes, starting at 0.
type ExpertPack struct {
	FP8              bool
	Host             bool
	Experts          int
	I, P             int   // expert FFN width; rows per half of gate_up (P ≥ I)
	H, Hp, Ip        int   // hidden size; gate_up and down row pitches in elements
	GateUp, Down     int64 // arena offsets
	GateUpS, DownS   int64 // FP8: arena offsets of the float32 block scales
	GateUpMatBytes   int64 // one expert's gate_up bytes
	DownMatBytes     int64
	GateUpScaleCount int // scales per expert (FP8)
	DownScaleCount   int
}

// SpanBytes is the bytes of the arena the layer's experts take, from its
// first gate_up byte to the end of its last scale (or down matrix), padding
// included: what moves when the layer's experts live in host memory.
func (x ExpertPack) SpanBytes() int64 {
	end := x.Down + int64(x.Experts)*x.DownMatBytes
	if x.FP8 {
		end = x.DownS + int64(x.Experts*x.DownScaleCount)*4
	}
	return (end - x.GateUp + arenaAlign - 1) / arenaAlign * arenaAlign
}

// ExpertBytes is one expert's bytes as a step reads them: its gate_up and
// down matrices and their scales.
func (x ExpertPack) ExpertBytes() int64 {
	return x.GateUpMatBytes + x.DownMatBytes + int64(x.GateUpScaleCount+x.DownScaleCount)*4
}

// WeightLayout is where every bound tensor goes in the arena.
type WeightLayout struct {
	Bytes   int64 // arena size
	Tensors map[*drama3.Param]DeviceTensor
	Experts []ExpertPack // per backbone layer
	// HostBytes is the bytes in host memory: the experts, one block per
	// host layer (ExpertPack.SpanBytes), and HostDenseBytes, the block of
	// the dense tensors read a few rows at a time when they are there too;
	// 0 when every weight is in the arena.
	HostBytes      int64
	HostDenseBytes int64
	// SparseBytes is the arena bytes of the dense tensors the kernels read
	// a few rows of by token id (the token embedding, and an untied LM head,
	// which only the semantic head's gather at load reads): what a layout
	// with hostDense (LayoutWeightsTier) moves to host memory.
	SparseBytes int64

	places map[string]*placement // by stored tensor name
	stored int64                 // bytes of the placed tensors as stored (what the load reads)
}

// placement says how one stored tensor is copied into the arena: its source
// rows (rowElems elements each) go to dst(row); widen converts to float32 on
// the host first. hostLayer ≥ 0 places it in that layer's host block
// instead, hostDenseBlock in the host block of dense tensors.
type placement struct {
	param     *drama3.Param
	hostLayer int
	widen     bool
	rowElems  int
	rows      int
	dst       func(row int) int64
}

func (p *placement) srcRowBytes() int64 { return int64(p.rowElems) * int64(p.param.DType.Size()) }

func (p *placement) dstRowBytes() int64 {
	if p.widen {
		return int64(p.rowElems) * 4
	}
	return p.srcRowBytes()
}

// StoredBytes is the bytes the load reads into the arena (the tensors as stored).
func (l *WeightLayout) StoredBytes() int64 { return l.stored }

// Tensor returns p's place; ok is false for a tensor not placed.
func (l *WeightLayout) Tensor(p *drama3.Param) (DeviceTensor, bool) {
	t, ok := l.Tensors[p]
	return t, ok
}

// Blocks a placement may name besides a host layer's (placement.hostLayer).
const (
	arenaBlock     = -1
	hostDenseBlock = -2
)

type layoutBuilder struct {
	l    *WeightLayout
	off  int64
	err  error
	host int // the host layer whose experts are being placed, arenaBlock or hostDenseBlock
	// hostDense: the sparse-read dense tensors go to the host block.
	hostDense bool
}

func (b *layoutBuilder) align() { b.off = (b.off + arenaAlign - 1) / arenaAlign * arenaAlign }

func (b *layoutBuilder) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf("gpu weights: "+format, args...)
	}
}

// plain places p contiguously at the current offset (no alignment: groups
// align once at their start).
func (b *layoutBuilder) plain(p *drama3.Param) {
	if p == nil || b.err != nil {
		return
	}
	if _, dup := b.l.places[p.Name]; dup {
		return // a tied handle (lm_head is embed_tokens)
	}
	widen := len(p.Shape) == 1 || len(p.Shape) == 3 // norms and biases; conv1d [C, 1, K]
	switch p.DType {
	case checkpoint.BF16, checkpoint.F16, checkpoint.F32:
	default:
		b.fail("tensor %s: dtype %s is not a dense type", p.Name, p.DType)
		return
	}
	n := int(p.NumElements())
	dt := p.DType
	if widen {
		dt = checkpoint.F32
	}
	off := b.off
	pl := &placement{param: p, hostLayer: b.host, widen: widen, rowElems: n, rows: 1, dst: func(int) int64 { return off }}
	b.l.places[p.Name] = pl
	b.l.Tensors[p] = DeviceTensor{Off: off, DType: dt, Shape: p.Shape, Host: b.host == hostDenseBlock}
	b.l.stored += p.Size
	b.off += pl.dstRowBytes()
}

// group places several tensors back to back, aligned at the start.
func (b *layoutBuilder) group(ps ...*drama3.Param) {
	b.align()
	for _, p := range ps {
		b.plain(p)
	}
}

// sparse places a dense tensor the kernels read a few rows of by token id
// as a group of its own: in the arena, or with hostDense in the host block
// of dense tensors. Either way its aligned bytes count in SparseBytes.
func (b *layoutBuilder) sparse(p *drama3.Param) {
	if p == nil || b.err != nil {
		return
	}
	if !b.hostDense {
		b.align()
		start := b.off
		b.plain(p)
		b.align()
		b.l.SparseBytes += b.off - start
		return
	}
	off := b.off
	b.off, b.host = b.l.HostDenseBytes, hostDenseBlock
	b.plain(p)
	b.align()
	b.l.SparseBytes += b.off - b.l.HostDenseBytes
	b.l.HostDenseBytes = b.off
	b.off, b.host = off, arenaBlock
}

// matrix checks that p is a BF16 matrix whose width the GEMV can read.
func (b *layoutBuilder) bf16Matrix(p *drama3.Param, what string) {
	if p == nil || b.err != nil {
		return
	}
	if p.DType != checkpoint.BF16 {
		b.fail("tensor %s: %s is %s; the GPU backend runs BF16 matrices (and FP8 experts)", p.Name, what, p.DType)
		return
	}
	if c := p.Shape[len(p.Shape)-1]; c%8 != 0 {
		b.fail("tensor %s: %d columns; the GPU GEMV needs a multiple of 8", p.Name, c)
	}
}

func roundUp(v, m int) int { return (v + m - 1) / m * m }

// LayoutWeights lays out every bound tensor of w in the arena. The
// backbone's matrices must be BF16 (routed experts BF16 or block-FP8 in
// 128×128 blocks); other groups (tower, heads, codebooks) are placed as stored.
func LayoutWeights(w *drama3.Weights) (*WeightLayout, error) {
	return LayoutWeightsTier(w, len(w.Layers), false)
}

// LayoutWeightsTier is LayoutWeights with the routed experts of the layers
// from deviceLayers on in host memory, one block per layer (TierPlan), and
// with hostDense the tensors of SparseBytes in one more host block: the
// arena is smaller by exactly their bytes, every other offset as in
// LayoutWeights but for the spans taken out.
func LayoutWeightsTier(w *drama3.Weights, deviceLayers int, hostDense bool) (*WeightLayout, error) {
	cfg := w.Config
	t := &cfg.Text
	if deviceLayers < 0 || deviceLayers > len(w.Layers) {
		return nil, fmt.Errorf("gpu weights: experts of %d of %d layers on the device", deviceLayers, len(w.Layers))
	}
	l := &WeightLayout{Tensors: map[*drama3.Param]DeviceTensor{}, places: map[string]*placement{}}
	b := &layoutBuilder{l: l, host: arenaBlock, hostDense: hostDense}
	fp8 := cfg.Quant.FP8()
	if fp8 && (cfg.Quant.BlockRows != FP8Block || cfg.Quant.BlockCols != FP8Block) {
		return nil, fmt.Errorf("gpu weights: quantization_config.weight_block_size [%d, %d]: the GPU kernels read FP8 experts in %d×%d blocks only",
			cfg.Quant.BlockRows, cfg.Quant.BlockCols, FP8Block, FP8Block)
	}

	b.bf16Matrix(w.Embed, "embed_tokens")
	b.sparse(w.Embed)
	b.group(w.FinalNorm)
	for i := range w.Layers {
		L := &w.Layers[i]
		b.group(L.InputNorm, L.PostAttentionNorm)
		if m := L.Linear; m != nil {
			for _, p := range []*drama3.Param{m.InProjQKV, m.InProjZ, m.InProjB, m.InProjA, m.OutProj} {
				b.bf16Matrix(p, "a DeltaNet projection")
			}
			b.group(m.InProjQKV, m.InProjZ, m.InProjB, m.InProjA)
			b.group(m.OutProj)
			b.group(m.Conv1D, m.DtBias, m.ALog, m.Norm)
		}
		if m := L.Full; m != nil {
			for _, p := range []*drama3.Param{m.QProj, m.KProj, m.VProj, m.OProj} {
				b.bf16Matrix(p, "an attention projection")
			}
			b.group(m.QProj, m.KProj, m.VProj)
			b.group(m.OProj)
			b.group(m.QNorm, m.KNorm)
		}
		m := &L.MoE
		for _, p := range []*drama3.Param{m.Router, m.SharedGate, m.SharedUp, m.SharedDown, m.SharedExpertGate} {
			b.bf16Matrix(p, "an MoE projection")
		}
		b.group(m.Router, m.SharedGate, m.SharedUp, m.SharedExpertGate)
		b.group(m.SharedDown)
		if i < deviceLayers {
			l.Experts = append(l.Experts, b.experts(m, t.NumExperts, t.HiddenSize, t.MoEIntermediate, fp8))
			continue
		}
		// A host layer's experts: laid out from 0 in a block of their own.
		off := b.off
		b.off, b.host = 0, i
		x := b.experts(m, t.NumExperts, t.HiddenSize, t.MoEIntermediate, fp8)
		x.Host = true
		l.HostBytes += x.SpanBytes()
		l.Experts = append(l.Experts, x)
		b.off, b.host = off, arenaBlock
	}
	// Everything else bound (LM head, codebooks, semantic head, tower) as stored.
	params := w.Params()
	scales := map[*drama3.Param]bool{}
	for _, p := range params {
		if p.Scale != nil {
			scales[p.Scale] = true
		}
	}
	for _, p := range params {
		if _, done := l.places[p.Name]; done || b.err != nil {
			continue
		}
		if p.DType == checkpoint.F8E4M3 || scales[p] {
			continue // expert weights and scales: packed above
		}
		if p == w.LMHead && p.DType == checkpoint.BF16 {
			b.sparse(p) // read by the semantic head's gather only (tower_bind_cuda.go)
			continue
		}
		b.group(p)
	}
	if b.err != nil {
		return nil, b.err
	}
	l.HostBytes += l.HostDenseBytes
	b.align()
	l.Bytes = b.off
	return l, nil
}

// experts packs one layer's routed experts (either checkpoint layout).
func (b *layoutBuilder) experts(m *drama3.MoE[*drama3.Param], E, H, I int, fp8 bool) ExpertPack {
	x := ExpertPack{FP8: fp8, Experts: E, I: I, P: I, H: H, Hp: roundUp(H, 8), Ip: roundUp(I, 8)}
	if fp8 {
		x.Hp, x.Ip = roundUp(H, 16), roundUp(I, 16)
		if !m.Fused {
			x.P = roundUp(I, FP8Block)
		}
	}
	elem := int64(2)
	if fp8 {
		elem = 1
	}
	x.GateUpMatBytes = int64(2*x.P) * int64(x.Hp) * elem
	x.DownMatBytes = int64(H) * int64(x.Ip) * elem
	b.align()
	x.GateUp = b.off
	b.off += int64(E) * x.GateUpMatBytes
	b.align()
	x.Down = b.off
	b.off += int64(E) * x.DownMatBytes
	scols := func(c int) int { return (c + FP8Block - 1) / FP8Block }
	if fp8 {
		x.GateUpScaleCount = scols(2*x.P) * scols(x.Hp)
		x.DownScaleCount = scols(H) * scols(x.Ip)
		b.align()
		x.GateUpS = b.off
		b.off += int64(E*x.GateUpScaleCount) * 4
		b.align()
		x.DownS = b.off
		b.off += int64(E*x.DownScaleCount) * 4
	}

	// Destinations of source rows. gateUpRow(e, r) is gate_up row r (0…2I−1,
	// gate then up) of expert e; its scale row is r/128 within a half.
	gateUpRow := func(e, r int) int64 {
		d := e*2*x.P + r
		if r >= I {
			d = e*2*x.P + x.P + r - I
		}
		return x.GateUp + int64(d)*int64(x.Hp)*elem
	}
	downRow := func(e, r int) int64 { return x.Down + (int64(e)*int64(H)+int64(r))*int64(x.Ip)*elem }
	sGU, sHalf := scols(x.Hp), x.P/FP8Block
	gateUpScaleRow := func(e, half, sr int) int64 {
		return x.GateUpS + (int64(e*x.GateUpScaleCount)+int64((half*sHalf+sr)*sGU))*4
	}
	downScaleRow := func(e, sr int) int64 {
		return x.DownS + (int64(e*x.DownScaleCount)+int64(sr*scols(x.Ip)))*4
	}
	scaleRows := func(n int) int { return (n + FP8Block - 1) / FP8Block }

	add := func(p *drama3.Param, cols int, dst func(row int) int64) {
		if p == nil || b.err != nil {
			return
		}
		if !fp8 && p.DType != checkpoint.BF16 {
			b.fail("tensor %s: routed expert is %s; the GPU backend runs BF16 or FP8 experts", p.Name, p.DType)
			return
		}
		rows := int(p.NumElements()) / cols
		b.l.places[p.Name] = &placement{param: p, hostLayer: b.host, rowElems: cols, rows: rows, dst: dst}
		b.l.stored += p.Size
	}
	addScale := func(w *drama3.Param, dst func(row int) int64) {
		s := w.Scale
		if s == nil || b.err != nil {
			return
		}
		switch s.DType {
		case checkpoint.F32, checkpoint.BF16, checkpoint.F16:
		default:
			b.fail("tensor %s: block scales of dtype %s (want F32, BF16 or F16)", s.Name, s.DType)
			return
		}
		cols := s.Shape[len(s.Shape)-1]
		rows := int(s.NumElements()) / cols
		b.l.places[s.Name] = &placement{param: s, hostLayer: b.host, widen: true, rowElems: cols, rows: rows, dst: dst}
		b.l.stored += s.Size
	}
	if m.Fused {
		add(m.GateUp, H, func(r int) int64 { return gateUpRow(r/(2*I), r%(2*I)) })
		add(m.Down, I, func(r int) int64 { return downRow(r/H, r%H) })
		if fp8 {
			per := scaleRows(2 * I) // stored scale rows per expert, kept as they are (P = I)
			addScale(m.GateUp, func(r int) int64 {
				return x.GateUpS + (int64((r/per)*x.GateUpScaleCount)+int64((r%per)*sGU))*4
			})
			addScale(m.Down, func(r int) int64 { return downScaleRow(r/scaleRows(H), r%scaleRows(H)) })
		}
	} else {
		for e := range m.Experts {
			ex := &m.Experts[e]
			add(ex.Gate, H, func(r int) int64 { return gateUpRow(e, r) })
			add(ex.Up, H, func(r int) int64 { return gateUpRow(e, I+r) })
			add(ex.Down, I, func(r int) int64 { return downRow(e, r) })
			if fp8 {
				addScale(ex.Gate, func(r int) int64 { return gateUpScaleRow(e, 0, r) })
				addScale(ex.Up, func(r int) int64 { return gateUpScaleRow(e, 1, r) })
				addScale(ex.Down, func(r int) int64 { return downScaleRow(e, r) })
			}
		}
	}
	return x
}

// copySpan is one contiguous copy into the arena.
type copySpan struct {
	dst int64 // arena byte offset
	src []byte
}

// spans maps bytes [off, off+len(data)) of p's stored data (not widened) to
// arena copies, one per source row, merged where rows land back to back.
func (p *placement) spans(off int64, data []byte) []copySpan {
	rb := p.srcRowBytes()
	var out []copySpan
	for len(data) > 0 {
		in := off % rb
		dst := p.dst(int(off/rb)) + in
		n := int(min(rb-in, int64(len(data))))
		if k := len(out) - 1; k >= 0 && out[k].dst+int64(len(out[k].src)) == dst {
			out[k].src = out[k].src[:len(out[k].src)+n] // data continues the previous span's source
		} else {
			out = append(out, copySpan{dst: dst, src: data[:n]})
		}
		data = data[n:]
		off += int64(n)
	}
	return out
}

// arenaFiller turns the loader's chunks into copies into the arena: stored
// bytes go straight through (row by row where experts are packed), widened
// tensors are gathered whole, converted to float32 and then copied. copy
// receives a run of bytes and its offset in the arena (hostLayer −1) or in
// that layer's host block (hostDenseBlock: the host block of dense
// tensors); src is valid only during the call.
type arenaFiller struct {
	layout  *WeightLayout
	copy    func(hostLayer int, dst int64, src []byte) error
	done    int64
	pending map[string][]byte
}

func newArenaFiller(l *WeightLayout, copy func(hostLayer int, dst int64, src []byte) error) *arenaFiller {
	return &arenaFiller{layout: l, copy: copy, pending: map[string][]byte{}}
}

// chunk is a checkpoint.ChunkFunc.
func (f *arenaFiller) chunk(ti checkpoint.TensorInfo, off int64, data []byte) error {
	pl := f.layout.places[ti.Name]
	if pl == nil {
		return nil // not bound (Bind lists unplaced tensors)
	}
	if ti.DType != pl.param.DType || ti.Size != pl.param.Size {
		return fmt.Errorf("gpu weights: tensor %s: stored as %s (%d bytes), bound as %s (%d bytes)",
			ti.Name, ti.DType, ti.Size, pl.param.DType, pl.param.Size)
	}
	f.done += int64(len(data))
	if !pl.widen {
		for _, s := range pl.spans(off, data) {
			if err := f.copy(pl.hostLayer, s.dst, s.src); err != nil {
				return fmt.Errorf("gpu weights: copying %s: %w", ti.Name, err)
			}
		}
		return nil
	}
	buf := append(f.pending[ti.Name], data...)
	if int64(len(buf)) < ti.Size {
		f.pending[ti.Name] = buf
		return nil
	}
	delete(f.pending, ti.Name)
	t := &checkpoint.Tensor{Name: ti.Name, DType: ti.DType, Shape: ti.Shape, Data: buf}
	v, err := t.Float32s()
	if err != nil {
		return fmt.Errorf("gpu weights: %w", err)
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), len(v)*4)
	rb := pl.rowElems * 4
	for r := 0; r < pl.rows; r++ {
		if err := f.copy(pl.hostLayer, pl.dst(r), raw[r*rb:(r+1)*rb]); err != nil {
			return fmt.Errorf("gpu weights: copying %s: %w", ti.Name, err)
		}
	}
	return nil
}

// check fails unless every placed byte arrived.
func (f *arenaFiller) check() error {
	if f.done != f.layout.stored {
		return fmt.Errorf("gpu weights: %d of %d bytes loaded (a bound tensor is missing from the files)", f.done, f.layout.stored)
	}
	return nil
}

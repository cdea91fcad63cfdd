package cuda

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"proscenium/engine/cuda/kernel"
)

// This file describes the backbone's token mixers on the device (the Gated
// DeltaNet and the gated full attention, engine/cpu deltanet.go and
// attention.go) and the GEMM of prompt rows: geometries, where
// the weights, states and scratch live, and the bytes each needs, so the
// backbone can admit and lay out one arena before allocating anything. The
// launches are in mixers_cuda.go, the kernels in kernels/deltanet.cu,
// kernels/attention.cu and kernels/gemm.cu.
//
// Conventions: activations, states and the KV cache are float32 (the backbone
// must match the float32 CPU reference within 1e-4); projection matrices are
// BF16 [out, in] row-major as stored; the small per-layer vectors (conv
// weights, dt_bias, A_log, norm gains) are float32 (the loader widens them).

// Tensor is device memory at byte offset Off of Block: a weight inside the
// arena, a state, a scratch region. The Block's bounds are checked at every
// launch.
type Tensor struct {
	Block *Block
	Off   int64
}

// Whole is the tensor starting at the beginning of b.
func Whole(b *Block) Tensor { return Tensor{Block: b} }

// At is the tensor bytes further on.
func (t Tensor) At(bytes int64) Tensor { return Tensor{t.Block, t.Off + bytes} }

// addr is the device address of the tensor (0 for a tensor without a block).
func (t Tensor) addr() uintptr {
	if t.Block == nil {
		return 0
	}
	return t.Block.Ptr + uintptr(t.Off)
}

// DeltaNetGeometry is one Gated DeltaNet layer's dimensions (the backbone's
// linear_* keys).
type DeltaNetGeometry struct {
	Hidden               int
	KeyHeads, ValueHeads int // value head h reads key head h/(ValueHeads/KeyHeads)
	KeyDim, ValueDim     int
	ConvKernel           int
	Eps                  float32 // the gated output norm's (rms_norm_eps)
}

// deltaNetThreads is the block of kernels/deltanet.cu's deltanet_rows: one
// block per value head holds that head's [KeyDim, ValueDim] state in
// registers, a column per thread lane, the rows split over warp groups.
const deltaNetThreads = kernel.DnThreads

// deltaNetMaxRowsPerThread is the most state rows a thread holds.
const deltaNetMaxRowsPerThread = kernel.DnMaxr

// Validate says whether the kernels support the geometry.
func (g DeltaNetGeometry) Validate() error {
	switch {
	case g.Hidden <= 0 || g.KeyHeads <= 0 || g.ValueHeads <= 0 || g.KeyDim <= 0 || g.ValueDim <= 0 || g.ConvKernel < 1:
		return fmt.Errorf("cuda deltanet: bad geometry %+v", g)
	case g.ValueHeads%g.KeyHeads != 0:
		return fmt.Errorf("cuda deltanet: %d value heads are not a multiple of %d key heads", g.ValueHeads, g.KeyHeads)
	case g.ValueDim > deltaNetThreads:
		return fmt.Errorf("cuda deltanet: value head dim %d > %d is not supported", g.ValueDim, deltaNetThreads)
	case g.ConvKernel > kernel.DnMaxk:
		return fmt.Errorf("cuda deltanet: conv kernel %d > %d is not supported", g.ConvKernel, kernel.DnMaxk)
	}
	if r := g.rowsPerThread(); r > deltaNetMaxRowsPerThread {
		return fmt.Errorf("cuda deltanet: key dim %d with value dim %d needs %d state rows per thread (> %d)",
			g.KeyDim, g.ValueDim, r, deltaNetMaxRowsPerThread)
	}
	if g.Hidden%8 != 0 || (g.ValueHeads*g.ValueDim)%8 != 0 {
		return fmt.Errorf("cuda deltanet: hidden %d and value width %d must be multiples of 8", g.Hidden, g.ValueHeads*g.ValueDim)
	}
	return nil
}

// rowsPerThread is the state rows each thread of a head's block holds.
func (g DeltaNetGeometry) rowsPerThread() int {
	cw := (g.ValueDim + 31) / 32 // warps across the columns
	groups := (deltaNetThreads / 32) / cw
	return (g.KeyDim + groups - 1) / groups
}

// Channels is the conv width: q and k (KeyHeads·KeyDim each) then v.
func (g DeltaNetGeometry) Channels() int { return 2*g.KeyHeads*g.KeyDim + g.ValueHeads*g.ValueDim }

// ProjWidth is the width of one row of the input projections, in the order
// the kernels read them: qkv (Channels), z (ValueHeads·ValueDim), b and a
// (ValueHeads each).
func (g DeltaNetGeometry) ProjWidth() int {
	return g.Channels() + g.ValueHeads*g.ValueDim + 2*g.ValueHeads
}

// convStateFloats is the conv state: the last ConvKernel−1 pre-conv inputs,
// kept per value head ([K−1][ValueHeads][2·KeyDim+ValueDim], the q and k
// channels of the head's key head copied for each of its value heads) so the
// fused kernel's block of a head owns every value it reads and writes.
func (g DeltaNetGeometry) convStateFloats() int {
	return (g.ConvKernel - 1) * g.ValueHeads * (2*g.KeyDim + g.ValueDim)
}

// StateBytes is a layer's state: the conv state then the fp32 recurrent state
// [ValueHeads, KeyDim, ValueDim]. It starts (and resets to) all zeros.
func (g DeltaNetGeometry) StateBytes() int64 {
	return 4 * int64(g.convStateFloats()+g.ValueHeads*g.KeyDim*g.ValueDim)
}

// ScratchBytes is the scratch a forward of up to rows rows uses (the
// projected rows and the gated-norm output, then the chunked form's
// regions when the geometry takes it and rows > 1).
func (g DeltaNetGeometry) ScratchBytes(rows int) int64 {
	if rows > 1 && g.chunkable() {
		return g.chunkScratch(rows).end
	}
	return g.scratchLayout(rows) + 4*int64(rows)*int64(g.ValueHeads*g.ValueDim)
}

// scratchLayout is the byte offsets of the regions of the scratch: the
// projected rows at 0, the gated-norm output at core.
func (g DeltaNetGeometry) scratchLayout(rows int) (core int64) {
	return alignUp(4 * int64(rows) * int64(g.ProjWidth()))
}

// alignUp rounds a scratch region's bytes up to 256 (the GEMM and the GEMV
// read their inputs as 16-byte vectors).
func alignUp(b int64) int64 { return (b + 255) &^ 255 }

// DeltaNetWeights is where one DeltaNet layer's weights live on the device.
// When InQKV, InZ, InB and InA lie one after another in one block (in that
// order) the four input projections run as one.
type DeltaNetWeights struct {
	InQKV  Tensor // BF16 [Channels, Hidden]
	InZ    Tensor // BF16 [ValueHeads·ValueDim, Hidden]
	InB    Tensor // BF16 [ValueHeads, Hidden]
	InA    Tensor // BF16 [ValueHeads, Hidden]
	Conv   Tensor // float32 [Channels, ConvKernel]: depthwise, no bias
	DtBias Tensor // float32 [ValueHeads]
	ALog   Tensor // float32 [ValueHeads]
	Norm   Tensor // float32 [ValueDim]: the gated norm's plain gain
	Out    Tensor // BF16 [Hidden, ValueHeads·ValueDim]
}

// DeltaNetLayer is one DeltaNet layer ready to run: its weights, its state
// (StateBytes, zeroed before the first row) and a scratch region of
// ScratchBytes(MaxRows) that layers may share (they run one after another).
type DeltaNetLayer struct {
	G       DeltaNetGeometry
	W       DeltaNetWeights
	State   Tensor
	Scratch Tensor
	MaxRows int
	Step    DeltaNetStep    // the kernels of a one-row forward
	Prefill DeltaNetPrefill // the kernels of a forward of more rows (deltanet_chunk.go)
}

// inputProjections are the layer's four input projections (qkv, z, b, a)
// in the order their outputs are stacked in Scratch, and their rows: what
// every DeltaNet forward projects first (Queue.stacked).
func (l *DeltaNetLayer) inputProjections() ([]Tensor, []int) {
	g, w := l.G, l.W
	return []Tensor{w.InQKV, w.InZ, w.InB, w.InA}, []int{g.Channels(), g.ValueHeads * g.ValueDim, g.ValueHeads, g.ValueHeads}
}

// DeltaNetStep selects the kernels of a one-row DeltaNet forward.
type DeltaNetStep int

const (
	// DeltaNetFusedStep runs deltanet_rows, one block per value head (the
	// row prefill's kernel; 13 µs per layer at full geometry, docs/PERF.md).
	DeltaNetFusedStep DeltaNetStep = iota
	// DeltaNetSplitStep spreads each head's state over blocks of 32 value
	// columns (deltanet_step_cols) and then norms the heads and advances the
	// conv window (deltanet_step_norm): 4× the blocks at full geometry (the
	// backbone's default: faster per step, docs/PERF.md). With KeyDim >
	// deltaNetSplitMaxKeyDim the fused kernel runs instead.
	DeltaNetSplitStep
	// DeltaNetClusterStep is the split step in one launch a layer
	// (deltanet_step_cluster_fast: a head's columns over a thread block
	// cluster of kernel.DncCluster blocks whose gated norm meets in
	// distributed shared memory, docs/PERF.md "dn32"). Fast numerics on
	// sm_90 and later only, and geometries within its bounds
	// (DeltaNetGeometry.clusterable); elsewhere DeltaNetSplitStep runs.
	DeltaNetClusterStep
)

// deltaNetClusterEnv is $PROSCENIUM_GPU_DN_CLUSTER: "0" keeps the split
// kernels everywhere, "1" runs the cluster step wherever it can run, and by
// default (session 11, run 2: the step of one take 2.230 → 2.195 ms, of two
// 2.889 → 2.875, but of four 3.994 → 4.088 and of eight 6.507 → 6.620) the
// one-take step and B-row steps of up to two rows take it.
var deltaNetClusterEnv = os.Getenv("PROSCENIUM_GPU_DN_CLUSTER")

// deltaNetClusterDefault: layers set to the split step (the backbone's
// default) run the cluster step where it can run, in the one-take step and
// in B-row steps of up to deltaNetClusterMaxRows rows.
var deltaNetClusterDefault = deltaNetClusterEnv != "0"

// deltaNetAhead: a step's DeltaNet update reads what no kernel of the step
// writes before it (the recurrent state; the cluster step also its conv
// window and weights) before its PDL wait, behind an input projection that
// lets it start only after its own (docs/PERF.md "ahead25");
// $PROSCENIUM_GPU_DN_AHEAD=0 reads them after it, the same values, and
// leaves the input projections' trigger at their entry (Gemv.Waited).
var deltaNetAhead = os.Getenv("PROSCENIUM_GPU_DN_AHEAD") != "0"

// deltaNetClusterMaxRows is the widest B-row step deltaNetClusterDefault
// gives the cluster step (its 8-block clusters of 128 threads queue behind
// each other from four rows on).
var deltaNetClusterMaxRows = func() int {
	if deltaNetClusterEnv == "1" {
		return math.MaxInt
	}
	return 2
}()

// clusterable reports whether deltanet_step_cluster_fast's bounds hold: a
// thread per q/k channel and at most kernel.DncRows state rows a thread
// (KeyDim ≤ 128), a head's columns over kernel.DncCluster blocks of at most
// kernel.DncCols (ValueDim ≤ 128), ConvKernel ≤ kernel.DncMaxk.
func (g DeltaNetGeometry) clusterable() bool {
	return g.KeyDim <= kernel.DncThreads && g.KeyDim <= 2*kernel.DncWarps*kernel.DncRows &&
		g.ValueDim <= kernel.DncCluster*kernel.DncCols && g.ConvKernel <= kernel.DncMaxk
}

// deltaNetSplitThreads is the split step kernels' block; its warps hold at
// most DN_MAXR state rows each.
const (
	deltaNetSplitThreads   = kernel.DnsThreads
	deltaNetSplitMaxKeyDim = kernel.DnsWarps * deltaNetMaxRowsPerThread
)

// AttentionGeometry is one gated full-attention layer's dimensions.
type AttentionGeometry struct {
	Hidden                  int
	Heads, KVHeads, HeadDim int
	RotaryDim               int     // head_dim·partial_rotary_factor: rotate-half RoPE on these leading dims
	RopeTheta               float64 // rope_theta
	Eps                     float32 // the q/k norms' (rms_norm_eps)
}

// attnMaxHeadDim is the attention kernels' bound: ATT_MAXD head dims per lane.
const attnMaxHeadDim = 32 * kernel.AttMaxd

// A row's keys are split over blocks whose softmax partials are combined:
// attnMaxSplits blocks per row and head for a step (each takes a share of
// the rows cached at run time, so a captured step needs no bound), one per
// attnSplitRows rows of the bound the host gives for a prefill, at most
// attnMaxSplits (the partials' scratch holds that many per row and head).
// A prefill has blocks enough in its rows and heads: attnSplitRows is the
// rows attn_partial's warps take in one sweep (ATT_WARPS·32), so that no
// warp idles and the partials written and combined stay few (16 rows a
// split left three of four warps idle and wrote 19 partials a row and head
// for a 300-row prompt), and at most attnPrefillSplits splits, which keeps
// the float64 partials of a core block's rows at half a step's count per
// row (a longer context gives each split more rows). Any split gives the
// CPU's bits under exact (kernels/attention.cu).
// $PROSCENIUM_GPU_ATTN_SPLIT_ROWS (a positive number of rows) sets
// attnSplitRows for benchmarks.
const (
	attnMaxSplits     = kernel.AttMaxSplits
	attnPrefillSplits = attnMaxSplits / 2
)

var attnSplitRows = positiveFromEnv("PROSCENIUM_GPU_ATTN_SPLIT_ROWS", kernel.AttWarps*32)

// positiveFromEnv is $name when that is a positive integer, else def (a bad
// value is reported on stderr).
func positiveFromEnv(name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		fmt.Fprintf(os.Stderr, "proscenium-gpu: %s=%q ignored: not a positive integer\n", name, v)
		return def
	}
	return n
}

// Validate says whether the kernels support the geometry.
func (g AttentionGeometry) Validate() error {
	switch {
	case g.Hidden <= 0 || g.Heads <= 0 || g.KVHeads <= 0 || g.HeadDim <= 0:
		return fmt.Errorf("cuda attention: bad geometry %+v", g)
	case g.Heads%g.KVHeads != 0:
		return fmt.Errorf("cuda attention: %d heads are not a multiple of %d kv heads", g.Heads, g.KVHeads)
	case g.HeadDim > attnMaxHeadDim:
		return fmt.Errorf("cuda attention: head dim %d > %d is not supported", g.HeadDim, attnMaxHeadDim)
	case g.RotaryDim < 0 || g.RotaryDim > g.HeadDim || g.RotaryDim%2 != 0:
		return fmt.Errorf("cuda attention: rotary dims %d must be even and within head dim %d", g.RotaryDim, g.HeadDim)
	case g.RotaryDim > 0 && !(g.RopeTheta > 0):
		return fmt.Errorf("cuda attention: rope theta %g", g.RopeTheta)
	case g.Hidden%8 != 0 || (g.Heads*g.HeadDim)%8 != 0:
		return fmt.Errorf("cuda attention: hidden %d and head width %d must be multiples of 8", g.Hidden, g.Heads*g.HeadDim)
	}
	return nil
}

// ProjWidth is the width of one row of the q, k and v projections, in the
// order the kernels read them: per head the query then the gate
// (Heads·2·HeadDim), then k and v (KVHeads·HeadDim each).
func (g AttentionGeometry) ProjWidth() int { return (2*g.Heads + 2*g.KVHeads) * g.HeadDim }

// KVBytes is a KV cache of capacity rows: K then V, float32
// [capacity, KVHeads, HeadDim] each (float32 so the backbone matches the
// CPU reference; bf16 would halve it).
func (g AttentionGeometry) KVBytes(capacity int) int64 {
	return 2 * 4 * int64(capacity) * int64(g.KVHeads*g.HeadDim)
}

// maxSplits is the most blocks a row's keys are split over with a cache of
// capacity rows.
func maxSplits(capacity int) int { return max(1, min(attnMaxSplits, capacity)) }

// attnSplits is the blocks each of n rows' keys are split over when the
// rows end at most maxLen rows into the cache.
func attnSplits(n, maxLen, capacity int) int {
	if n == 1 {
		return maxSplits(capacity)
	}
	return max(1, min(maxSplits(capacity), attnPrefillSplits, (maxLen+attnSplitRows-1)/attnSplitRows))
}

// partItems is the (row, split) pairs per head whose partials (and split
// maxima) a scratch for calls of up to rows rows holds: a prefill's rows
// at attnPrefillSplits each, or a step's rows (one, or MaxStepRows takes of
// a B-row step) at maxSplits each, whichever is more.
func partItems(rows, capacity int) int64 {
	return int64(max(rows*attnPrefillSplits, min(rows, MaxStepRows)*maxSplits(capacity)))
}

// ScratchBytes is the scratch a forward of up to rows rows over a cache of
// capacity rows uses: the projected rows, the normed and rotated queries,
// every score of each row and head with each split's maximum, the split
// softmax partials (float64) and the gated output.
func (g AttentionGeometry) ScratchBytes(rows, capacity int) int64 {
	return g.ScratchBytesBlocks(rows, rows, capacity)
}

// ScratchBytesBlocks is ScratchBytes for a layer whose core (queries,
// scores, partials) runs core rows at a time while its projections and gated
// output take rows (AttentionLayer.CoreRows): a prefill pass's projections
// in one GEMM each, its scores in blocks that keep the scratch small.
func (g AttentionGeometry) ScratchBytesBlocks(rows, core, capacity int) int64 {
	l := g.scratchLayoutBlocks(rows, core, capacity)
	return l.attn + 4*int64(rows)*int64(g.Heads*g.HeadDim)
}

// attnScratch is the byte offsets of the attention scratch's regions:
// proj [rows, ProjWidth], qn [rows, Heads, HeadDim], scores
// [rows·Heads, capacity], smax [rows·Heads, splits] float32; part
// [rows·Heads, splits, 1+HeadDim] float64; attn [rows, Heads·HeadDim].
// The flash core's regions (flashLayout) lie from qn on, over the core
// blocks' (a call runs one of the two): flashQn, flashPart and the tensor-core
// kernels' parts flashMMA.
type attnScratch struct {
	proj, qn, scores, smax, part, attn, flashQn, flashPart int64
	flashMMA                                               flashMMAScratch
}

func (g AttentionGeometry) scratchLayout(rows, capacity int) attnScratch {
	return g.scratchLayoutBlocks(rows, rows, capacity)
}

// scratchLayoutBlocks is scratchLayout with proj and attn of rows rows and
// qn, scores, smax and part of core rows (ScratchBytesBlocks).
func (g AttentionGeometry) scratchLayoutBlocks(rows, core, capacity int) attnScratch {
	nh, hd, r, c := int64(g.Heads), int64(g.HeadDim), int64(rows), int64(core)
	parts := partItems(core, capacity)
	var l attnScratch
	l.qn = alignUp(4 * r * int64(g.ProjWidth()))
	l.scores = l.qn + alignUp(4*c*nh*hd)
	l.smax = l.scores + alignUp(4*c*nh*int64(capacity))
	l.part = l.smax + alignUp(4*nh*parts)
	l.attn = l.part + alignUp(8*nh*parts*(hd+1))
	if g.flashSupports() {
		f := g.flashLayout(rows, capacity)
		l.flashQn, l.flashPart = l.qn+f.qn, l.qn+f.part
		m := f.mma
		l.flashMMA = flashMMAScratch{qp: l.qn + m.qp, qinv: l.qn + m.qinv, kp: l.qn + m.kp, vp: l.qn + m.vp, kinv: l.qn + m.kinv, vexp: l.qn + m.vexp}
		l.attn = max(l.attn, l.qn+f.end)
	}
	return l
}

// attnRegions is an attention layer's scratch regions (scratchLayout's at
// MaxRows and Capacity) and the halves of its KV cache: keys kc, then values
// vc, [Capacity, KVHeads·HeadDim] float32 each.
type attnRegions struct {
	proj, qn, scores, smax, part, attn, flashQn, flashPart, kc, vc Tensor
	mmaQp, mmaQinv, mmaKp, mmaVp, mmaKinv, mmaVexp                 Tensor // the tensor-core kernels' parts (flashMMAScratch)
}

func (l *AttentionLayer) regions() attnRegions {
	sl := l.G.scratchLayoutBlocks(l.MaxRows, l.coreRows(), l.Capacity)
	at := l.Scratch.At
	return attnRegions{proj: l.Scratch, qn: at(sl.qn), scores: at(sl.scores), smax: at(sl.smax), part: at(sl.part),
		attn: at(sl.attn), flashQn: at(sl.flashQn), flashPart: at(sl.flashPart),
		mmaQp: at(sl.flashMMA.qp), mmaQinv: at(sl.flashMMA.qinv), mmaKp: at(sl.flashMMA.kp), mmaVp: at(sl.flashMMA.vp),
		mmaKinv: at(sl.flashMMA.kinv), mmaVexp: at(sl.flashMMA.vexp),
		kc: l.KV, vc: l.KV.At(4 * int64(l.Capacity) * int64(l.G.KVHeads*l.G.HeadDim))}
}

// ropeTheta is the RoPE base the attention prep kernels take (1, unused,
// where no dimension rotates).
func (g AttentionGeometry) ropeTheta() float64 {
	if g.RotaryDim == 0 {
		return 1
	}
	return g.RopeTheta
}

// AttentionWeights is where one attention layer's weights live on the
// device. When Q, K and V lie one after another in one block (in that
// order) the three projections run as one.
type AttentionWeights struct {
	Q     Tensor // BF16 [Heads·2·HeadDim, Hidden]: per head the query rows, then the gate rows
	K     Tensor // BF16 [KVHeads·HeadDim, Hidden]
	V     Tensor // BF16 [KVHeads·HeadDim, Hidden]
	O     Tensor // BF16 [Hidden, Heads·HeadDim]
	QNorm Tensor // float32 [HeadDim], zero-centred
	KNorm Tensor // float32 [HeadDim], zero-centred
}

// AttentionLayer is one attention layer ready to run: its weights, its KV
// cache (KVBytes(Capacity)), and a scratch region of
// ScratchBytesBlocks(MaxRows, coreRows(), Capacity) that layers may share.
type AttentionLayer struct {
	G        AttentionGeometry
	W        AttentionWeights
	KV       Tensor
	Capacity int
	Scratch  Tensor
	MaxRows  int
	// CoreRows (0: MaxRows) is the most rows whose scores and partials the
	// scratch holds at once: a call of more rows runs its core in blocks of
	// that many (Queue.attentionBlocks) between projections over every row.
	// Under fast numerics a call of more than one row runs its core over
	// every row at once instead (Queue.attentionFlash).
	CoreRows int
}

// coreRows is CoreRows, or MaxRows when that is 0 or more.
func (l *AttentionLayer) coreRows() int {
	if l.CoreRows <= 0 || l.CoreRows > l.MaxRows {
		return l.MaxRows
	}
	return l.CoreRows
}

// Gemm describes the prompt-row projection Y[N, Rows] = X[N, Cols]·W[Rows, Cols]ᵀ
// (kernels/gemm.cu). X and Y are float32, W BF16 or block-FP8 (E4M3 with
// float32 [ceil(Rows/128), ceil(Cols/128)] scales). It follows rule 1 of the
// backbone's numerics contract (docs/MODEL.md): each weight the float32 the
// CPU holds, exact float64 products, float64 sums, one rounding, so Y has
// cpu.MatMulRows's bits.
//
// Grouped form (experts): with Groups > 0, the N rows are sorted by group;
// group e covers rows Offsets[e] ≤ i < Offsets[e+1] (int32, device memory,
// written by a kernel) and uses matrix Ids[e] of the Mats matrices stored one
// after another in W (Ids unset: matrix e). Row i reads X row RowIds[i]
// (int32, device; unset: row i). MaxGroupRows bounds the rows of one group
// (the grid is sized by it; a top-k routing of N tokens gives each expert at
// most N rows).
type Gemm struct {
	N, Rows, Cols int
	XStride       int // floats between rows of X (0: Cols)
	YStride       int // floats between rows of Y (0: Rows)

	Groups       int
	Offsets      Tensor // int32 [Groups+1]
	Ids          Tensor // int32 [Groups], or no Block: group e uses matrix e
	RowIds       Tensor // int32 [N], or no Block: row i reads X row i
	XRows        int    // rows X holds when RowIds is set (0: N)
	MaxGroupRows int
	Mats         int // matrices in W (1 when not grouped)
	// Kernel names the instance (kernels/gemm.cu): "simt" (SIMT float64),
	// "tc16" or "tc32" (FP64 tensor cores, 16 or 32 W rows per block), or
	// a BF16 tensor-core one of fast numerics ("p3m128n64" …, gemm_fast.go);
	// "" picks (ChooseGemm or ChooseGemmFast by the policy, or
	// $PROSCENIUM_GPU_GEMM for benchmarks).
	Kernel string
}

//go:build cuda

package cuda

import (
	"fmt"
	"os"

	"proscenium/engine/cuda/kernel"
)

// devPtr is block b's device address as a kernel argument (0, a null
// pointer, for nil).
func devPtr(b *Block) kernel.Ptr {
	if b == nil {
		return 0
	}
	return kernel.Ptr(b.Ptr)
}

// policy is the instance the policy families launch under the device's
// numerics.
func (q *Queue) policy() kernel.Policy { return policyOf(q.d.Numerics) }

const elementwiseThreads = 256

func elementwiseGrid(n int) [3]int {
	return [3]int{min((n+elementwiseThreads-1)/elementwiseThreads, 65535), 1, 1}
}

// EmbedGather writes out[i,:] = table[ids[i],:] (float32 from a BF16
// [vocab, width] table) for n ids (int32). Ids out of range write NaN.
func (q *Queue) EmbedGather(out, table, ids *Block, n, vocab, width int) error {
	if err := firstErr(checkFits(out, 0, int64(n*width*4), "gather out"),
		checkFits(table, 0, int64(vocab*width*2), "gather table"), checkFits(ids, 0, int64(n*4), "gather ids")); err != nil {
		return err
	}
	return kernel.EmbedGatherBF16(q, [3]int{n, 1, 1}, elementwiseThreads, devPtr(out), devPtr(table), devPtr(ids), vocab, width)
}

// RMSNormZC is the zero-centred RMSNorm of n rows of width (engine/cpu.RMSNormZeroCentred).
func (q *Queue) RMSNormZC(out, x, w *Block, n, width int, eps float32) error {
	if err := firstErr(checkFits(out, 0, int64(n*width*4), "rmsnorm out"),
		checkFits(x, 0, int64(n*width*4), "rmsnorm x"), checkFits(w, 0, int64(width*4), "rmsnorm w")); err != nil {
		return err
	}
	return kernel.RMSNormZCF32(q, q.policy(), [3]int{n, 1, 1}, elementwiseThreads, devPtr(out), devPtr(x), devPtr(w), width, eps)
}

// SwiGLU writes out[i] = silu(gate[i])·up[i] for n elements.
func (q *Queue) SwiGLU(out, gate, up *Block, n int) error {
	if err := firstErr(checkFits(out, 0, int64(n*4), "swiglu out"),
		checkFits(gate, 0, int64(n*4), "swiglu gate"), checkFits(up, 0, int64(n*4), "swiglu up")); err != nil {
		return err
	}
	return kernel.SwiGLUF32(q, elementwiseGrid(n), elementwiseThreads, devPtr(out), devPtr(gate), devPtr(up), n)
}

// Add computes dst[i] += x[i] for n elements.
func (q *Queue) Add(dst, x *Block, n int) error {
	if err := firstErr(checkFits(dst, 0, int64(n*4), "add dst"), checkFits(x, 0, int64(n*4), "add x")); err != nil {
		return err
	}
	return kernel.AddF32(q, elementwiseGrid(n), elementwiseThreads, devPtr(dst), devPtr(x), n)
}

// Gemv describes one-row projections y[e] = W_{ids[e]}·x[e] for e < N over
// a set of [Rows, Cols] matrices stored one after another (experts). With Ids
// nil there is one matrix (N must be 1). XStride is the element distance
// between the inputs of consecutive e (0: all share one x).
type Gemv struct {
	Rows, Cols int
	N          int    // matrices applied (grid y)
	Ids        *Block // int32 [N] matrix indices, or nil
	IdsOff     int64  // byte offset of the ids used in Ids
	Mats       int    // matrices stored in W (and S) from WOff (SOff)
	WOff, SOff int64  // byte offsets of the first matrix in W and its scales in S
	XStride    int
	Variant    GemvVariant // the kernel instance
	// IdsReady says the ids were written by the host (a copy, not a
	// kernel): the kernel then reads them before waiting for the previous
	// kernel. Leave it false when a kernel writes the ids.
	IdsReady bool
	// Table is the expert cache's table row of the layer, at the projected
	// part (ExpertRef): the matrices are where it says, not at WOff (0: they are).
	Table kernel.Ptr
	// WeightsAhead says no kernel before this one in its chain writes W (the
	// model's weights, loaded before any step): the kernel then loads its
	// first weights before its PDL wait, so they stream while the kernel
	// before it finishes (gemv.cuh gemv_body's ahead). One matrix only (Ids
	// nil, no Table), fast instances only; the model's GEMVs set it where
	// gemvAhead says.
	WeightsAhead bool
	// Waited: the kernel lets the next launch start only once all its
	// blocks have passed their PDL wait (gemv.cuh GEMV_WAITED), so every
	// kernel before this one has finished when the next one starts, which
	// may then read what they wrote before its own wait: a DeltaNet step's
	// input projections, whose update reads its state there
	// (Queue.deltaNetInWaited; docs/PERF.md "ahead25"). Not with
	// WeightsAhead (those let the next launch start first). Elsewhere the
	// next launch starts as early as PDL allows: a waited trigger delays it,
	// which measured 20 µs slower in the two-take step when every GEMV did.
	Waited bool
	// F64 picks the instances that follow rule 1 of the backbone's numerics
	// contract (docs/MODEL.md): the CPU's float32 weights, exact float64
	// products and sums, one rounding (cpu.MatVec's bits). Backbone
	// projections set it under exact numerics (Queue.backboneGemv); the
	// tower's GEMVs (outside the contract) sum in float32.
	F64 bool
}

// gemvF64Overrides are PROSCENIUM_GPU_GEMV64's instance choices (benchmarks).
var gemvF64Overrides = func() map[string]GemvVariant {
	m, err := ParseGemvF64Overrides(os.Getenv("PROSCENIUM_GPU_GEMV64"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "proscenium-gpu: PROSCENIUM_GPU_GEMV64 ignored:", err)
	}
	return m
}()

// backboneGemv returns g as a backbone projection under the device's
// numerics: Exact runs the float64 instances (rule 1 of the contract) on
// ChooseGemvF64's choice, Fast the float32 ones on ChooseGemv's, with the
// weights ahead where gemvAhead says for site.
func (q *Queue) backboneGemv(g Gemv, fp8 bool, site gemvSite) Gemv {
	if q.d.Numerics.Exact() {
		g.Variant, g.F64 = ChooseGemvF64(fp8, g.Rows, g.Cols, g.N, gemvF64Overrides), true
		return g
	}
	g.Variant, g.F64 = ChooseGemv(fp8, g.Rows, g.Cols, g.N), false
	g.WeightsAhead = gemvAhead[site]
	return g
}

func (g Gemv) check(kind string, elemBytes int, W, x, y *Block) error {
	switch {
	case g.Rows <= 0 || g.Cols <= 0 || g.N <= 0 || g.Mats <= 0:
		return fmt.Errorf("cuda: %s gemv: bad shape %+v", kind, g)
	case g.Cols%(16/elemBytes) != 0:
		return fmt.Errorf("cuda: %s gemv: %d columns is not a multiple of %d", kind, g.Cols, 16/elemBytes)
	case g.Ids == nil && g.N != 1:
		return fmt.Errorf("cuda: %s gemv: %d matrices applied without ids", kind, g.N)
	case g.Variant.Rows < 1 || g.Variant.Unroll < 1 || g.Variant.TPR < 32 || gemvThreads%g.Variant.TPR != 0:
		return fmt.Errorf("cuda: %s gemv: no kernel variant chosen", kind)
	}
	xs := int64(g.Cols)
	if g.XStride > 0 {
		xs = int64((g.N-1)*g.XStride + g.Cols)
	}
	errs := []error{
		checkFits(W, g.WOff, int64(g.Mats)*int64(g.Rows)*int64(g.Cols)*int64(elemBytes), kind+" gemv weights"),
		checkFits(x, 0, xs*4, kind+" gemv x"),
		checkFits(y, 0, int64(g.N*g.Rows*4), kind+" gemv y"),
	}
	if g.Ids != nil {
		errs = append(errs, checkFits(g.Ids, g.IdsOff, int64(g.N*4), kind+" gemv ids"))
	}
	return firstErr(errs...)
}

// gemvLaunch enqueues the instance of g.Variant for BF16 (S nil) or FP8
// weights, float (g.F64 false) or double sums.
func (q *Queue) gemvLaunch(g Gemv, y, W, S, x *Block) error {
	blocks, _ := g.Variant.Grid(g.Rows)
	grid := [3]int{blocks, g.N, 1}
	ready := 0
	if g.IdsReady {
		ready |= kernel.GemvIdsReady
	}
	if g.WeightsAhead && g.Ids == nil && g.Table == 0 {
		ready |= kernel.GemvWeightsAhead
	}
	if g.Waited {
		ready |= kernel.GemvWaited
	}
	w, ids, v := devPtr(W).Add(g.WOff), g.idsPtr(), g.Variant.Name()
	mstride := int64(g.Rows) * int64(g.Cols)
	if S == nil {
		if g.F64 {
			return kernel.GemvBF16d(q, kernel.GemvBF16dKernel("gemv_bf16d_"+v), grid, gemvThreads,
				devPtr(y), w, devPtr(x), ids, mstride, g.XStride, g.Rows, g.Cols, ready, g.Table)
		}
		return kernel.GemvBF16(q, kernel.GemvBF16Kernel("gemv_bf16_"+v), grid, gemvThreads,
			devPtr(y), w, devPtr(x), ids, mstride, g.XStride, g.Rows, g.Cols, ready, g.Table)
	}
	s, sstride := devPtr(S).Add(g.SOff), int64(FP8ScaleCount(g.Rows, g.Cols))
	if g.F64 {
		return kernel.GemvFP8d(q, kernel.GemvFP8dKernel("gemv_fp8d_"+v), grid, gemvThreads,
			devPtr(y), w, s, devPtr(x), ids, mstride, sstride, g.XStride, g.Rows, g.Cols, ready, g.Table)
	}
	return kernel.GemvFP8(q, kernel.GemvFP8Kernel("gemv_fp8_"+v), grid, gemvThreads,
		devPtr(y), w, s, devPtr(x), ids, mstride, sstride, g.XStride, g.Rows, g.Cols, ready, g.Table)
}

func (g Gemv) idsPtr() kernel.Ptr {
	if g.Ids == nil {
		return 0
	}
	return devPtr(g.Ids).Add(g.IdsOff)
}

// GemvBF16 runs the projection with BF16 weights W. Ids are not range-checked
// on the device: the caller guarantees 0 ≤ id < Mats.
func (q *Queue) GemvBF16(g Gemv, y, W, x *Block) error {
	if err := g.check("bf16", 2, W, x, y); err != nil {
		return err
	}
	return q.gemvLaunch(g, y, W, nil, x)
}

// GemvFP8 runs the projection with E4M3 weights W and their float32 block
// scales S ([ceil(Rows/128), ceil(Cols/128)] per matrix, matrices one after
// another), dequantised in registers.
func (q *Queue) GemvFP8(g Gemv, y, W, S, x *Block) error {
	if err := g.check("fp8", 1, W, x, y); err != nil {
		return err
	}
	ns := FP8ScaleCount(g.Rows, g.Cols)
	if err := checkFits(S, g.SOff, int64(g.Mats*ns*4), "fp8 gemv scales"); err != nil {
		return err
	}
	return q.gemvLaunch(g, y, W, S, x)
}

// LaunchFloor enqueues an empty kernel (to measure the cost of a launch).
func (q *Queue) LaunchFloor() error { return kernel.LaunchFloor(q, [3]int{1, 1, 1}, 32) }

// b2i is a kernel's int flag.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

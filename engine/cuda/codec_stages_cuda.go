//go:build cuda

package cuda

import "proscenium/engine/cuda/kernel"

// The codec's stages on the device. A stage reads its FP32 input chunk
// (rows × inCh, time-major; hist32 earlier rows readable before it) and
// writes its FP32 output chunk (rows·up × outCh). Earlier inputs a stage's
// kernels read (a conv's (K−1)·d rows of FP16 input, a layer's W−1 rows of
// keys and values) sit in front of the chunk in the scratch buffers: the
// stream copies them there from the stage's histories before the chunk and
// back after it, so every element is computed from the same values by the
// same code whatever the chunking.

type codecStageBase struct{ label string }

func (b *codecStageBase) base() *codecStageBase { return b }

// codecNeed is the scratch a stage uses for a chunk: FP16 halves in the two
// GEMM-input buffers, FP32 values in the qkv buffer.
type codecNeed struct{ a16, b16, qkv int }

func (n *codecNeed) max(o codecNeed) {
	n.a16, n.b16, n.qkv = max(n.a16, o.a16), max(n.b16, o.b16), max(n.qkv, o.qkv)
}

type codecGPUStage interface {
	base() *codecStageBase
	up() int
	inCh() int
	outCh() int
	hist32() int      // FP32 input rows before the chunk this stage reads
	histories() []int // bytes of each further history the stage keeps
	need(rows int) codecNeed
	// run computes a chunk: in and out point at the chunk's first row, pos
	// is the absolute index of that input row, h the stage's histories.
	run(r *codecRun, h []*Block, in, out uintptr, rows, pos int) error
}

// codecRun is the scratch of one chunk.
type codecRun struct {
	q             *codecQueue
	a16, b16, qkv uintptr
}

// withHistory runs body with hrows rows of history (h, rowBytes each) in
// front of the chunk at buf: copied in before, the new last hrows rows of
// [history, chunk) copied back after.
func (r *codecRun) withHistory(h *Block, buf uintptr, hrows, rows, rowBytes int, body func(chunk uintptr) error) error {
	if hrows == 0 {
		return body(buf)
	}
	if err := r.q.copy(buf, h.Ptr, hrows*rowBytes); err != nil {
		return err
	}
	if err := body(buf + uintptr(hrows*rowBytes)); err != nil {
		return err
	}
	return r.q.copy(h.Ptr, buf+uintptr(rows*rowBytes), hrows*rowBytes)
}

// ---------------------------------------------------------------------------

// codecBlockStage is a post-module layer: FP32 residual stream, RMSNorm
// statistics and attention (scores, softmax, weighted sum) in FP32; the four
// projections on the tensor cores, RoPE fused into the qkv tail.
type codecBlockStage struct {
	codecStageBase
	dim, heads, window, ffn  int
	qkv, wo, w13, w2         codecGEMM
	attnNorm, ffnNorm        *Block
	gammaAttn, gammaFF, freq *Block
}

func (s *codecBlockStage) up() int          { return 1 }
func (s *codecBlockStage) inCh() int        { return s.dim }
func (s *codecBlockStage) outCh() int       { return s.dim }
func (s *codecBlockStage) hist32() int      { return 0 }
func (s *codecBlockStage) histories() []int { return []int{(s.window - 1) * 3 * s.dim * 4} }
func (s *codecBlockStage) need(rows int) codecNeed {
	return codecNeed{a16: rows * s.dim, b16: rows * s.w2.cpad, qkv: (s.window - 1 + rows) * 3 * s.dim}
}

func (s *codecBlockStage) run(r *codecRun, h []*Block, in, out uintptr, rows, pos int) error {
	q, dim := r.q, s.dim
	if err := kernel.CodecRMSNorm(q, [3]int{rows, 1, 1}, 256, 0, kernel.Ptr(r.a16), kernel.Ptr(in), devPtr(s.attnNorm), dim, dim, 1e-5); err != nil {
		return err
	}
	err := r.withHistory(h[0], r.qkv, s.window-1, rows, 3*dim*4, func(qkv uintptr) error {
		if err := q.gemm(&s.qkv, gemmCall{a: r.a16, rows: rows, mode: epiRope, out: qkv, ldo: 3 * dim, pos0: pos,
			freq: s.freq.Ptr, ropeCols: 2 * dim}); err != nil {
			return err
		}
		return kernel.CodecAttention(q, [3]int{rows, s.heads, 1}, 128, kernel.Ptr(r.a16), kernel.Ptr(qkv), dim, s.window, pos, dim)
	})
	if err != nil {
		return err
	}
	if err := q.gemm(&s.wo, gemmCall{a: r.a16, rows: rows, mode: epiGamma, out: out, ldo: dim, res: in, ldr: dim,
		p0: s.gammaAttn.Ptr}); err != nil {
		return err
	}
	if err := kernel.CodecRMSNorm(q, [3]int{rows, 1, 1}, 256, 0, kernel.Ptr(r.a16), kernel.Ptr(out), devPtr(s.ffnNorm), dim, dim, 1e-5); err != nil {
		return err
	}
	if err := q.gemm(&s.w13, gemmCall{a: r.a16, rows: rows, mode: epiSwiGLU16, out: r.b16, ldo: s.w2.cpad}); err != nil {
		return err
	}
	return q.gemm(&s.w2, gemmCall{a: r.b16, rows: rows, mode: epiGamma, out: out, ldo: dim, res: out, ldr: dim,
		p0: s.gammaFF.Ptr})
}

// codecNormStage is the post-module's final RMSNorm, FP32.
type codecNormStage struct {
	codecStageBase
	w  *Block
	ch int
}

func (s *codecNormStage) up() int                 { return 1 }
func (s *codecNormStage) inCh() int               { return s.ch }
func (s *codecNormStage) outCh() int              { return s.ch }
func (s *codecNormStage) hist32() int             { return 0 }
func (s *codecNormStage) histories() []int        { return nil }
func (s *codecNormStage) need(rows int) codecNeed { return codecNeed{} }
func (s *codecNormStage) run(r *codecRun, h []*Block, in, out uintptr, rows, pos int) error {
	return kernel.CodecRMSNorm(r.q, [3]int{rows, 1, 1}, 256, kernel.Ptr(out), 0, kernel.Ptr(in), devPtr(s.w), s.ch, s.ch, 1e-5)
}

// codecConvStage is a causal conv (or linear), or a transposed conv as its
// equivalent conv at the input rate (up = stride), with the Snake before it
// fused into the FP16 input preparation and tanh after it into the tail.
type codecConvStage struct {
	codecStageBase
	g           codecGEMM
	alpha, inv  *Block // nil: no Snake
	tanh        bool
	up_, outCh_ int
}

func (s *codecConvStage) up() int          { return s.up_ }
func (s *codecConvStage) inCh() int        { return s.g.in }
func (s *codecConvStage) outCh() int       { return s.outCh_ }
func (s *codecConvStage) hist32() int      { return 0 }
func (s *codecConvStage) histRows() int    { return (s.g.taps - 1) * s.g.dil }
func (s *codecConvStage) histories() []int { return []int{s.histRows() * s.g.cpad * 2} }
func (s *codecConvStage) need(rows int) codecNeed {
	return codecNeed{a16: (s.histRows() + rows) * s.g.cpad}
}

func (s *codecConvStage) run(r *codecRun, h []*Block, in, out uintptr, rows, pos int) error {
	var alpha, inv uintptr
	if s.alpha != nil {
		alpha, inv = s.alpha.Ptr, s.inv.Ptr
	}
	return r.withHistory(h[0], r.a16, s.histRows(), rows, s.g.cpad*2, func(a uintptr) error {
		if err := r.q.prep16(a, in, rows, s.g.in, s.g.cpad, alpha, inv); err != nil {
			return err
		}
		mode := epiF32
		if s.tanh {
			mode = epiTanh
		}
		return r.q.gemm(&s.g, gemmCall{a: a, rows: rows, mode: mode, out: out, ldo: s.g.out})
	})
}

// codecConvNeXtStage is an upsample ConvNeXt block: depthwise conv and
// LayerNorm in FP32 (to FP16), the two pointwise linears on the tensor cores
// with GELU and the scaled residual fused into their tails.
type codecConvNeXtStage struct {
	codecStageBase
	ch, kernel, hidden     int
	pw1, pw2               codecGEMM
	dw, dwb, nw, nb, gamma *Block
}

func (s *codecConvNeXtStage) up() int          { return 1 }
func (s *codecConvNeXtStage) inCh() int        { return s.ch }
func (s *codecConvNeXtStage) outCh() int       { return s.ch }
func (s *codecConvNeXtStage) hist32() int      { return s.kernel - 1 }
func (s *codecConvNeXtStage) histories() []int { return nil }
func (s *codecConvNeXtStage) need(rows int) codecNeed {
	return codecNeed{a16: rows * s.pw1.cpad, b16: rows * s.pw2.cpad}
}

func (s *codecConvNeXtStage) run(r *codecRun, h []*Block, in, out uintptr, rows, pos int) error {
	q := r.q
	if err := kernel.CodecDwconvLayerNorm(q, [3]int{rows, 1, 1}, 256, kernel.Ptr(r.a16), kernel.Ptr(in), devPtr(s.dw), devPtr(s.dwb), devPtr(s.nw), devPtr(s.nb), s.ch, s.kernel, s.pw1.cpad, 1e-6); err != nil {
		return err
	}
	if err := q.gemm(&s.pw1, gemmCall{a: r.a16, rows: rows, mode: epiGELU16, out: r.b16, ldo: s.pw2.cpad}); err != nil {
		return err
	}
	return q.gemm(&s.pw2, gemmCall{a: r.b16, rows: rows, mode: epiGamma, out: out, ldo: s.ch, res: in, ldr: s.ch,
		p0: s.gamma.Ptr})
}

// codecResidualStage is a decoder residual unit: Snake → dilated conv7 →
// Snake → conv1 → + input. The first Snake runs in the FP16 input
// preparation, the second in conv7's tail, the residual add in conv1's; the
// residual stream stays FP32.
type codecResidualStage struct {
	codecStageBase
	ch                         int
	conv7, conv1               codecGEMM
	alpha1, inv1, alpha2, inv2 *Block
}

func (s *codecResidualStage) up() int          { return 1 }
func (s *codecResidualStage) inCh() int        { return s.ch }
func (s *codecResidualStage) outCh() int       { return s.ch }
func (s *codecResidualStage) hist32() int      { return 0 }
func (s *codecResidualStage) histRows() int    { return (s.conv7.taps - 1) * s.conv7.dil }
func (s *codecResidualStage) histories() []int { return []int{s.histRows() * s.conv7.cpad * 2} }
func (s *codecResidualStage) need(rows int) codecNeed {
	return codecNeed{a16: (s.histRows() + rows) * s.conv7.cpad, b16: rows * s.conv1.cpad}
}

func (s *codecResidualStage) run(r *codecRun, h []*Block, in, out uintptr, rows, pos int) error {
	q := r.q
	err := r.withHistory(h[0], r.a16, s.histRows(), rows, s.conv7.cpad*2, func(a uintptr) error {
		if err := q.prep16(a, in, rows, s.ch, s.conv7.cpad, s.alpha1.Ptr, s.inv1.Ptr); err != nil {
			return err
		}
		return q.gemm(&s.conv7, gemmCall{a: a, rows: rows, mode: epiSnake16, out: r.b16, ldo: s.conv1.cpad,
			p0: s.alpha2.Ptr, p1: s.inv2.Ptr})
	})
	if err != nil {
		return err
	}
	return q.gemm(&s.conv1, gemmCall{a: r.b16, rows: rows, mode: epiRes, out: out, ldo: s.ch, res: in, ldr: s.ch})
}

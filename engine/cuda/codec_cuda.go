//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// The codec decoder on the device (kernels/codec.cu), bound from the CPU
// reference's loaded codec (cpu.Codec.Plan: one weight map, one geometry).
// Precision: every convolution and linear runs on the tensor cores with FP16
// weights (rounded to nearest even from the float32 fold of weight norm) and
// FP16 inputs, accumulating in FP32; everything else keeps FP32 activations
// (docs/MODEL.md "GPU codec" says which and why). Decoding goes through a
// CodecStream, on a CUDA stream of its own.

// Codec is a codec decoder whose weights live on the device. It is
// immutable: several streams may decode with it at once.
type Codec struct {
	dev    *Device
	geom   drama3.CodecGeometry
	rvq    codecRVQ
	stages []codecGPUStage
	owned  []*Block // every weight block, freed by Close
}

// codecRVQ is the codebooks and their projections, FP32 (codec_rvq_f32).
type codecRVQ struct {
	books, dim       int
	cb, cbOff, sizes *Block
	projW, projB     *Block
}

// codecGEMM is one convolution's device weights (codec_conv_gemm's B).
type codecGEMM struct {
	in, cpad, out, npad, taps, dil int
	w, bias                        *Block
}

// NewCodec uploads a loaded codec's weights: p is its plan (the CPU
// reference's stage order and packed weights, cpu.Codec.Plan).
func NewCodec(dev *Device, p *drama3.CodecPlan) (*Codec, error) {
	c := &Codec{dev: dev, geom: p.Geometry}
	if err := c.bind(*p); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Geometry is the codec's shape (the CPU reference's).
func (c *Codec) Geometry() drama3.CodecGeometry { return c.geom }

// Close frees the weights. Streams must be closed first.
func (c *Codec) Close() {
	for _, b := range c.owned {
		c.dev.Free(b)
	}
	c.owned = nil
}

func upload32[T float32 | int32](c *Codec, v []T) (*Block, error) {
	b, err := c.dev.Alloc(int64(len(v)) * 4)
	if err != nil {
		return nil, err
	}
	c.owned = append(c.owned, b)
	return b, Upload(c.dev, b, 0, v)
}

func (c *Codec) gemm(w []float32, bias []float32, out, taps, in, dil int) (codecGEMM, error) {
	g := codecGEMM{in: in, cpad: roundUp(in, codecPadK), out: out, npad: roundUp(out, codecPadN), taps: taps, dil: dil}
	b16 := packConvF16(w, out, taps, in)
	blk, err := c.dev.Alloc(int64(len(b16)) * 2)
	if err != nil {
		return g, err
	}
	c.owned = append(c.owned, blk)
	if err := Upload(c.dev, blk, 0, b16); err != nil {
		return g, err
	}
	g.w = blk
	if bias == nil {
		bias = make([]float32, out)
	}
	g.bias, err = upload32(c, padF32(bias, g.npad))
	return g, err
}

func (c *Codec) conv(w *drama3.CodecConvWeights) (codecGEMM, error) {
	return c.gemm(w.W, w.Bias, w.Out, w.Kernel, w.In, w.Dilation)
}

func (c *Codec) bind(p drama3.CodecPlan) error {
	if err := c.bindRVQ(p); err != nil {
		return err
	}
	var pendingSnake []float32 // a Snake stage runs inside the next conv's input preparation
	for i, s := range p.Stages {
		if pendingSnake != nil && s.Kind != drama3.CodecStageConv && s.Kind != drama3.CodecStageTransConv {
			return fmt.Errorf("cuda codec: stage %d (%s) follows a Snake; only a convolution may", i, s.Label)
		}
		var st codecGPUStage
		var err error
		switch s.Kind {
		case drama3.CodecStageSnake:
			pendingSnake = s.Alpha
			continue
		case drama3.CodecStageBlock:
			st, err = c.bindBlock(s.Block)
		case drama3.CodecStageRMSNorm:
			var w *Block
			w, err = upload32(c, s.Norm)
			st = &codecNormStage{w: w, ch: len(s.Norm)}
		case drama3.CodecStageConv, drama3.CodecStageTransConv:
			st, err = c.bindConv(s, pendingSnake)
			pendingSnake = nil
		case drama3.CodecStageConvNeXt:
			st, err = c.bindConvNeXt(s.ConvNeXt)
		case drama3.CodecStageResidual:
			st, err = c.bindResidual(s)
		default:
			err = fmt.Errorf("cuda codec: stage %d: unknown kind %d", i, s.Kind)
		}
		if err != nil {
			return err
		}
		c.stages = append(c.stages, st)
		st.base().label = s.Label
	}
	if pendingSnake != nil {
		return fmt.Errorf("cuda codec: the last stage is a Snake")
	}
	return nil
}

func (c *Codec) bindRVQ(p drama3.CodecPlan) error {
	books := append([]drama3.CodecQuantizerWeights{p.Semantic}, p.Residual...)
	r := &c.rvq
	r.books, r.dim = len(books), p.Geometry.CodebookDim
	var cb, projW, projB []float32
	var off, sizes []int32
	for _, q := range books {
		off = append(off, int32(len(cb)))
		sizes = append(sizes, int32(q.Entries))
		cb = append(cb, q.Codebook...)
		projW = append(projW, q.Proj.W...) // [latent][1][dim]: kernel 1
		projB = append(projB, q.Proj.Bias...)
	}
	var err error
	for _, x := range []struct {
		dst **Block
		v   []float32
	}{{&r.cb, cb}, {&r.projW, projW}, {&r.projB, projB}} {
		if *x.dst, err = upload32(c, x.v); err != nil {
			return err
		}
	}
	if r.cbOff, err = upload32(c, off); err != nil {
		return err
	}
	r.sizes, err = upload32(c, sizes)
	return err
}

func (c *Codec) bindBlock(b *drama3.CodecBlockWeights) (codecGPUStage, error) {
	if b.Dim%64 != 0 || b.Heads*64 != b.Dim {
		return nil, fmt.Errorf("cuda codec: post-module width %d is not %d heads of 64", b.Dim, b.Heads)
	}
	if b.Window < 1 || b.Window > 1024 {
		return nil, fmt.Errorf("cuda codec: attention window %d outside 1..1024 (the attention kernel's limit)", b.Window)
	}
	st := &codecBlockStage{dim: b.Dim, heads: b.Heads, window: b.Window, ffn: b.FFN}
	var err error
	if st.qkv, err = c.gemm(b.WQKV, nil, 3*b.Dim, 1, b.Dim, 1); err != nil {
		return nil, err
	}
	if st.wo, err = c.gemm(b.WO, nil, b.Dim, 1, b.Dim, 1); err != nil {
		return nil, err
	}
	if st.w13, err = c.gemm(interleaveRows(b.W1, b.W3, b.FFN, b.Dim), nil, 2*b.FFN, 1, b.Dim, 1); err != nil {
		return nil, err
	}
	if st.w2, err = c.gemm(b.W2, nil, b.Dim, 1, b.FFN, 1); err != nil {
		return nil, err
	}
	for _, x := range []struct {
		dst **Block
		v   []float32
	}{{&st.attnNorm, b.AttnNorm}, {&st.ffnNorm, b.FFNNorm}, {&st.gammaAttn, b.GammaAttn}, {&st.gammaFF, b.GammaFF}, {&st.freq, b.RopeFreq}} {
		if *x.dst, err = upload32(c, x.v); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (c *Codec) bindConv(s drama3.CodecPlanStage, snake []float32) (codecGPUStage, error) {
	g, err := c.conv(s.Conv)
	if err != nil {
		return nil, err
	}
	st := &codecConvStage{g: g, tanh: s.Tanh, up_: 1, outCh_: s.Conv.Out}
	if s.Kind == drama3.CodecStageTransConv {
		st.up_, st.outCh_ = s.Stride, s.OutCh
	}
	if snake != nil {
		if st.alpha, err = upload32(c, snake); err != nil {
			return nil, err
		}
		if st.inv, err = upload32(c, snakeInv(snake)); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (c *Codec) bindConvNeXt(x *drama3.CodecConvNeXtWeights) (codecGPUStage, error) {
	if x.Ch > 4096 {
		return nil, fmt.Errorf("cuda codec: ConvNeXt width %d above the kernel's 4096", x.Ch)
	}
	st := &codecConvNeXtStage{ch: x.Ch, kernel: x.Kernel, hidden: x.Hidden}
	var err error
	if st.pw1, err = c.conv(&x.PW1); err != nil {
		return nil, err
	}
	if st.pw2, err = c.conv(&x.PW2); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		dst **Block
		v   []float32
	}{{&st.dw, x.DW}, {&st.dwb, x.DWBias}, {&st.nw, x.NormW}, {&st.nb, x.NormB}, {&st.gamma, x.Gamma}} {
		if *f.dst, err = upload32(c, f.v); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func (c *Codec) bindResidual(s drama3.CodecPlanStage) (codecGPUStage, error) {
	st := &codecResidualStage{ch: s.Conv.Out}
	var err error
	if st.conv7, err = c.conv(s.Conv); err != nil {
		return nil, err
	}
	if st.conv1, err = c.conv(s.Conv2); err != nil {
		return nil, err
	}
	// α₂ and its inverse feed conv7's fused tail, which covers its padded outputs.
	for _, f := range []struct {
		dst **Block
		v   []float32
	}{{&st.alpha1, s.Alpha}, {&st.inv1, snakeInv(s.Alpha)},
		{&st.alpha2, padF32(s.Alpha2, st.conv7.npad)}, {&st.inv2, padF32(snakeInv(s.Alpha2), st.conv7.npad)}} {
		if *f.dst, err = upload32(c, f.v); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// ---------------------------------------------------------------------------
// Launches on a codec stream.

// codecQueue enqueues work on one CodecStream's CUDA stream, on the device
// thread (inside Device.Do). It is the device's second queue: the Queue of
// Device.Run stays on the main stream.
type codecQueue struct {
	d *Device
	s cu.Stream
}

// Launch enqueues kernel name on the codec stream (kernel.Launcher).
func (q *codecQueue) Launch(name string, grid [3]int, block int, args ...uint64) error {
	fn, err := q.d.Function(name)
	if err != nil {
		return err
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i])
	}
	if err := fn.Launch(grid[0], grid[1], grid[2], block, 1, 1, 0, q.s, params); err != nil {
		return fmt.Errorf("cuda codec: launch %s: %w", name, err)
	}
	return nil
}

// copy enqueues a device-to-device copy of n bytes.
func (q *codecQueue) copy(dst, src uintptr, n int) error {
	if n == 0 {
		return nil
	}
	return cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), int64(n), q.s)
}

// codecEpilogue values: the fused tails of codec_conv_gemm.
const (
	epiF32      = kernel.EpiF32
	epiSnake16  = kernel.EpiSnake16
	epiRes      = kernel.EpiRes
	epiGamma    = kernel.EpiGamma
	epiGELU16   = kernel.EpiGelu16
	epiTanh     = kernel.EpiTanh
	epiSwiGLU16 = kernel.EpiSwiglu16
	epiRope     = kernel.EpiRope
)

// gemmCall is one codec_conv_gemm launch: a (rows from −(taps−1)·dil
// readable, cpad FP16 channels), the tail and its operands.
type gemmCall struct {
	a        uintptr
	rows     int
	mode     int
	out      uintptr
	ldo      int
	res      uintptr
	ldr      int
	p0, p1   uintptr
	pos0     int
	freq     uintptr
	ropeCols int
	n        int // real outputs (0: the conv's)
}

func (q *codecQueue) gemm(g *codecGEMM, x gemmCall) error {
	if x.rows == 0 {
		return nil
	}
	n := g.out
	if x.n > 0 {
		n = x.n
	}
	return kernel.CodecConvGemm(q, [3]int{(x.rows + 127) / 128, g.npad / codecPadN, 1}, kernel.CgThreads, kernel.CodecConvGemmArgs{
		A: kernel.Ptr(x.a), M: x.rows, Cpad: g.cpad, Taps: g.taps, Dil: g.dil, B: devPtr(g.w), Bias: devPtr(g.bias),
		N: n, Mode: x.mode, Out: kernel.Ptr(x.out), Ldo: x.ldo, Res: kernel.Ptr(x.res), Ldr: x.ldr,
		P0: kernel.Ptr(x.p0), P1: kernel.Ptr(x.p1), Pos0: x.pos0, Freq: kernel.Ptr(x.freq), RopeCols: x.ropeCols})
}

// prep16 writes half(snake(x)) (or half(x) when alpha is 0) for rows × ch
// values into rows × cpad halves.
func (q *codecQueue) prep16(out, x uintptr, rows, ch, cpad int, alpha, inv uintptr) error {
	n := rows * cpad
	if n == 0 {
		return nil
	}
	return kernel.CodecPrep16(q, [3]int{min((n+255)/256, 1<<16), 1, 1}, 256, kernel.Ptr(out), kernel.Ptr(x), rows, ch, cpad, kernel.Ptr(alpha), kernel.Ptr(inv))
}

//go:build cuda

package cuda

import (
	"fmt"

	"gorgonia.org/cu"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// The codec encoder on the device (kernels/codec_encoder.cu; reference
// engine/cpu codec_encode.go, codec_quantize.go): 44.1 kHz audio → z_enc →
// z_pre → codes [frames][10], the same steps as the CPU over the whole
// reference at once, every step in FP32 (the check is z_pre within 1e-4 and
// nearest-code picks whose near-ties FP16 would flip; docs/MODEL.md "GPU
// codec encoder"). Weights come packed as the CPU applies them
// (drama3.CodecEncoderConv: a strided conv as a stride-1 conv over blocks of
// stride rows, so the strided conv is the plain conv kernel on a reshaped
// view). The post-module norm is the decoder's codec_rmsnorm; the rest are
// the encoder's kernels. An encode runs on a CUDA stream of its own.

// CodecEncoder is a codec encoder whose weights live on the device. It is
// immutable; Encode calls may run one after another from any goroutine.
type CodecEncoder struct {
	dev     *Device
	geom    drama3.CodecEncoderGeometry
	encoder []encStep // audio → z_enc
	reduce  []encStep // z_enc → z_pre
	quant   encQuant
	owned   []*Block
}

// encQuant is every quantizer's weights, book after book (codec_enc_quantize).
type encQuant struct {
	books, dim, latent int
	inW, inB, unit, cb *Block
	cbOff, sizes       *Block
	outW, outB         *Block
}

// LoadCodecEncoderFile reads the encoder of a codec.pth onto the device.
func LoadCodecEncoderFile(dev *Device, path string, opt drama3.CodecOptions) (*CodecEncoder, error) {
	w, err := drama3.ReadCodecEncoderFile(path, opt)
	if err != nil {
		return nil, err
	}
	return NewCodecEncoder(dev, w)
}

// NewCodecEncoder uploads an encoder's weights (drama3.ReadCodecEncoder).
func NewCodecEncoder(dev *Device, w *drama3.CodecEncoderWeights) (*CodecEncoder, error) {
	e := &CodecEncoder{dev: dev, geom: w.Geometry}
	if err := e.bind(w); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// Geometry is the encoder's shape.
func (e *CodecEncoder) Geometry() drama3.CodecEncoderGeometry { return e.geom }

// Close frees the weights.
func (e *CodecEncoder) Close() {
	for _, b := range e.owned {
		e.dev.Free(b)
	}
	e.owned = nil
}

// encUpload puts v in a new block the encoder owns.
func encUpload[T float32 | int32](e *CodecEncoder, v []T) (*Block, error) {
	b, err := e.dev.Alloc(int64(max(len(v), 1)) * 4)
	if err != nil {
		return nil, fmt.Errorf("cuda codec encoder: %w", err)
	}
	e.owned = append(e.owned, b)
	return b, Upload(e.dev, b, 0, v)
}

// f32Upload is one weight to upload and where its block goes.
type f32Upload struct {
	dst **Block
	v   []float32
}

// uploads uploads each value into its destination, stopping at the first error.
func (e *CodecEncoder) uploads(xs ...f32Upload) error {
	for _, x := range xs {
		var err error
		if *x.dst, err = encUpload(e, x.v); err != nil {
			return err
		}
	}
	return nil
}

func (e *CodecEncoder) conv(c drama3.CodecConv) (*encConv, error) {
	p := drama3.CodecEncoderConv(c)
	s := &encConv{in: p.In, out: p.Out, taps: p.Kernel, dil: p.Dilation, stride: max(c.Stride, 1)}
	return s, e.uploads(f32Upload{&s.w, p.W}, f32Upload{&s.bias, orZeros(p.Bias, p.Out)})
}

// linear is a bias-free Linear [out][in] as a kernel-1 conv.
func (e *CodecEncoder) linear(w []float32, out, in int) (*encConv, error) {
	return e.conv(drama3.CodecConv{W: w, Out: out, In: in, Kernel: 1, Dilation: 1})
}

func (e *CodecEncoder) snake(alpha []float32) (*encSnake, error) {
	s := &encSnake{ch: len(alpha)}
	return s, e.uploads(f32Upload{&s.alpha, alpha}, f32Upload{&s.inv, snakeInv(alpha)})
}

func (e *CodecEncoder) bind(w *drama3.CodecEncoderWeights) error {
	g := w.Geometry
	add := func(dst *[]encStep, s encStep, err error) error {
		if err == nil {
			*dst = append(*dst, s)
		}
		return err
	}
	first, err := e.conv(w.First)
	if err := add(&e.encoder, first, err); err != nil {
		return err
	}
	for i := range w.Blocks {
		b := &w.Blocks[i]
		for j := range b.Units {
			u, err := e.residualUnit(&b.Units[j])
			if err := add(&e.encoder, u, err); err != nil {
				return err
			}
		}
		sn, err := e.snake(b.Alpha)
		if err := add(&e.encoder, sn, err); err != nil {
			return err
		}
		down, err := e.conv(b.Down)
		if err := add(&e.encoder, down, err); err != nil {
			return err
		}
		if t := b.Transformer; t != nil {
			if err := e.transformer(&e.encoder, t, drama3.CodecEncoderWindow); err != nil {
				return err
			}
		}
	}
	sn, err := e.snake(w.FinalAlpha)
	if err := add(&e.encoder, sn, err); err != nil {
		return err
	}
	last, err := e.conv(w.Last)
	if err := add(&e.encoder, last, err); err != nil {
		return err
	}
	for i := range w.Downsample {
		d := &w.Downsample[i]
		down, err := e.conv(d.Down)
		if err := add(&e.reduce, down, err); err != nil {
			return err
		}
		x, err := e.convNeXt(d)
		if err := add(&e.reduce, x, err); err != nil {
			return err
		}
	}
	if err := e.transformer(&e.reduce, &w.Pre, g.Window); err != nil {
		return err
	}
	return e.bindQuantizers(w)
}

func (e *CodecEncoder) residualUnit(u *drama3.CodecResidualUnit) (*encResidual, error) {
	s := &encResidual{}
	var err error
	if s.snake1, err = e.snake(u.Alpha1); err != nil {
		return nil, err
	}
	if s.snake2, err = e.snake(u.Alpha2); err != nil {
		return nil, err
	}
	if s.conv7, err = e.conv(u.Conv7); err != nil {
		return nil, err
	}
	s.conv1, err = e.conv(u.Conv1)
	return s, err
}

func (e *CodecEncoder) convNeXt(d *drama3.CodecDownsample) (*encConvNeXt, error) {
	ch := d.Down.Out
	if ch > 4096 {
		return nil, fmt.Errorf("cuda codec encoder: ConvNeXt width %d above the kernel's 4096", ch)
	}
	s := &encConvNeXt{ch: ch, kernel: d.DW.Kernel, hidden: d.PW1.Out}
	var err error
	if s.pw1, err = e.conv(d.PW1); err != nil {
		return nil, err
	}
	if s.pw2, err = e.conv(d.PW2); err != nil {
		return nil, err
	}
	dwb := d.DW.Bias
	if dwb == nil {
		dwb = make([]float32, ch)
	}
	return s, e.uploads(f32Upload{&s.dw, d.DW.W}, f32Upload{&s.dwb, dwb}, f32Upload{&s.nw, d.NormW},
		f32Upload{&s.nb, d.NormB}, f32Upload{&s.gamma, d.Gamma})
}

// transformer appends a window-limited transformer's steps (optional input
// projection, layers, final norm, optional output projection).
func (e *CodecEncoder) transformer(dst *[]encStep, t *drama3.CodecTransformer, window int) error {
	if t.Dim%drama3.CodecHeadDim != 0 {
		return fmt.Errorf("cuda codec encoder: transformer width %d is not heads of %d", t.Dim, drama3.CodecHeadDim)
	}
	if window < 1 || window > 1024 {
		return fmt.Errorf("cuda codec encoder: attention window %d outside 1..1024 (the attention kernel's limit)", window)
	}
	if c := t.InputProj; c != nil {
		s, err := e.conv(*c)
		if err != nil {
			return err
		}
		*dst = append(*dst, s)
	}
	dim := t.Dim
	for i := range t.Layers {
		l := &t.Layers[i]
		s := &encBlock{dim: dim, heads: dim / drama3.CodecHeadDim, window: window, ffn: t.FFN}
		var err error
		for _, x := range []struct {
			dst     **encConv
			w       []float32
			out, in int
		}{{&s.wqkv, l.WQKV, 3 * dim, dim}, {&s.wo, l.WO, dim, dim}, {&s.w1, l.W1, t.FFN, dim}, {&s.w3, l.W3, t.FFN, dim}, {&s.w2, l.W2, dim, t.FFN}} {
			if *x.dst, err = e.linear(x.w, x.out, x.in); err != nil {
				return err
			}
		}
		if err := e.uploads(f32Upload{&s.attnNorm, l.AttentionNorm}, f32Upload{&s.ffnNorm, l.FFNNorm},
			f32Upload{&s.gammaAttn, l.GammaAttn}, f32Upload{&s.gammaFF, l.GammaFF}); err != nil {
			return err
		}
		*dst = append(*dst, s)
	}
	n := &encNorm{ch: dim}
	if err := e.uploads(f32Upload{&n.w, t.Norm}); err != nil {
		return err
	}
	*dst = append(*dst, n)
	if c := t.OutputProj; c != nil {
		s, err := e.conv(*c)
		if err != nil {
			return err
		}
		*dst = append(*dst, s)
	}
	return nil
}

// orZeros is b, or n zeros for a projection without a bias.
func orZeros(b []float32, n int) []float32 {
	if b == nil {
		return make([]float32, n)
	}
	return b
}

func (e *CodecEncoder) bindQuantizers(w *drama3.CodecEncoderWeights) error {
	qs := append([]drama3.CodecQuantizer{w.Semantic}, w.Residual...)
	ins := append([]drama3.CodecConv{w.SemanticIn}, w.ResidualIn...)
	q := &e.quant
	q.books, q.latent = len(qs), w.Geometry.Latent
	q.dim = w.Semantic.Proj.In
	if q.dim > 16 || q.latent > 4096 {
		return fmt.Errorf("cuda codec encoder: codebook width %d (at most 16) or latent %d (at most 4096) past the quantize kernel's limits", q.dim, q.latent)
	}
	var inW, inB, unit, cb, outW, outB []float32
	var off, sizes []int32
	for i, x := range qs {
		if x.Proj.In != q.dim || ins[i].Out != q.dim || x.Proj.Out != q.latent {
			return fmt.Errorf("cuda codec encoder: quantizer %d is %d wide (in_proj %d, out_proj %d → %d), want %d wide onto a latent of %d",
				i, x.Proj.In, ins[i].Out, x.Proj.In, x.Proj.Out, q.dim, q.latent)
		}
		if ins[i].Bias != nil && len(ins[i].Bias) != q.dim || x.Proj.Bias != nil && len(x.Proj.Bias) != q.latent {
			return fmt.Errorf("cuda codec encoder: quantizer %d's projections have %d and %d biases, want %d and %d", i, len(ins[i].Bias), len(x.Proj.Bias), q.dim, q.latent)
		}
		off = append(off, int32(len(cb)))
		sizes = append(sizes, int32(x.Size))
		cb = append(cb, x.Codebook[:x.Size*q.dim]...)
		unit = append(unit, drama3.CodecUnitCodebook(x.Codebook[:x.Size*q.dim], q.dim)...)
		in := drama3.CodecEncoderConv(ins[i])
		inW = append(inW, in.W...)
		inB = append(inB, orZeros(in.Bias, q.dim)...)
		out := drama3.CodecEncoderConv(x.Proj)
		outW = append(outW, out.W...)
		outB = append(outB, orZeros(out.Bias, q.latent)...)
	}
	if err := e.uploads(f32Upload{&q.inW, inW}, f32Upload{&q.inB, inB}, f32Upload{&q.unit, unit}, f32Upload{&q.cb, cb},
		f32Upload{&q.outW, outW}, f32Upload{&q.outB, outB}); err != nil {
		return err
	}
	var err error
	if q.cbOff, err = encUpload(e, off); err != nil {
		return err
	}
	q.sizes, err = encUpload(e, sizes)
	return err
}

// ---------------------------------------------------------------------------
// Encoding.

// Encode encodes mono 44.1 kHz audio as cpu.CodecEncoder.Encode does (same
// checks, padding and result), on the device.
func (e *CodecEncoder) Encode(audio []float32) (*drama3.CodecEncoding, error) {
	spf := e.geom.SamplesPerFrame
	frames, err := drama3.CodecEncodeFrames(audio, spf)
	if err != nil {
		return nil, err
	}
	// Size the buffers and the RoPE table over every step.
	rows, ch := frames*spf, 1
	elems, ropeRows := rows, 0
	for part, steps := range [][]encStep{e.encoder, e.reduce} {
		for i, s := range steps {
			n, c, need := s.plan(rows, ch)
			if need < 0 {
				return nil, fmt.Errorf("cuda codec encoder: %d samples (%d rows at %s step %d) do not divide into that step's stride",
					len(audio), rows, [...]string{"encoder", "reduction"}[part], i)
			}
			elems = max(elems, need)
			if _, ok := s.(*encBlock); ok {
				ropeRows = max(ropeRows, rows)
			}
			rows, ch = n, c
		}
	}
	if rows != frames {
		return nil, fmt.Errorf("codec: the encoder made %d frames from %d samples, want %d", rows, frames*spf, frames)
	}
	r := &encRun{e: e}
	defer r.free()
	for i := range r.buf {
		if err := r.alloc(&r.buf[i], int64(elems)*4); err != nil {
			return nil, err
		}
	}
	nb := e.quant.books
	if err := firstErr(r.alloc(&r.codes, int64(frames*nb)*4), r.alloc(&r.margins, int64(frames*nb)*4)); err != nil {
		return nil, err
	}
	if ropeRows > 0 {
		cos, sin := drama3.CodecRopeTable(e.geom.RopeBase, ropeRows)
		if err := firstErr(r.alloc(&r.cos, int64(len(cos))*4), r.alloc(&r.sin, int64(len(sin))*4)); err != nil {
			return nil, err
		}
		if err := firstErr(Upload(e.dev, r.cos, 0, cos), Upload(e.dev, r.sin, 0, sin)); err != nil {
			return nil, err
		}
	}
	padded := make([]float32, frames*spf)
	copy(padded, audio)
	if err := Upload(e.dev, r.buf[0], 0, padded); err != nil {
		return nil, err
	}
	res := &drama3.CodecEncoding{Frames: frames}
	cur, rows, ch := 0, frames*spf, 1
	if cur, rows, ch, err = r.steps(e.encoder, cur, rows, ch); err != nil {
		return nil, err
	}
	if res.ZEnc, err = r.channelMajor(cur, rows, ch); err != nil {
		return nil, err
	}
	if cur, rows, ch, err = r.steps(e.reduce, cur, rows, ch); err != nil {
		return nil, err
	}
	if res.ZPre, err = r.channelMajor(cur, rows, ch); err != nil {
		return nil, err
	}
	q := &e.quant
	err = r.do(func(cq *codecQueue) error {
		return kernel.CodecEncQuantize(cq, [3]int{frames, 1, 1}, 256, devPtr(r.codes), devPtr(r.margins), devPtr(r.buf[cur]), q.books, q.latent, q.dim, devPtr(q.inW), devPtr(q.inB), devPtr(q.unit), devPtr(q.cb), devPtr(q.cbOff), devPtr(q.sizes), devPtr(q.outW), devPtr(q.outB))
	})
	if err != nil {
		return nil, err
	}
	res.Codes, res.Margins = make([]int32, frames*nb), make([]float32, frames*nb)
	if err := firstErr(Download(e.dev, res.Codes, r.codes, 0), Download(e.dev, res.Margins, r.margins, 0)); err != nil {
		return nil, err
	}
	return res, nil
}

// encRun is one encode's device state: four signal buffers (any step's
// input, output and two scratch), the codes, margins and RoPE table.
type encRun struct {
	e              *CodecEncoder
	buf            [4]*Block
	codes, margins *Block
	cos, sin       *Block
	blocks         []*Block
}

func (r *encRun) alloc(dst **Block, bytes int64) error {
	b, err := r.e.dev.Alloc(max(bytes, 4))
	if err != nil {
		return fmt.Errorf("cuda codec encoder: %w", err)
	}
	r.blocks = append(r.blocks, b)
	*dst = b
	return nil
}

func (r *encRun) free() {
	for _, b := range r.blocks {
		r.e.dev.Free(b)
	}
	r.blocks = nil
}

// do runs body on a stream of its own, on the device thread, and waits.
func (r *encRun) do(body func(q *codecQueue) error) error {
	d := r.e.dev
	return d.Do(func() error {
		s, err := cu.MakeStream(cu.NonBlocking)
		if err != nil {
			return fmt.Errorf("cuda codec encoder: stream: %w", err)
		}
		defer s.Destroy()
		q := &codecQueue{d: d, s: s}
		if err := body(q); err != nil {
			s.Synchronize()
			return err
		}
		return s.Synchronize()
	})
}

// steps runs steps from buffer cur (rows × ch) and returns where the result is.
func (r *encRun) steps(steps []encStep, cur, rows, ch int) (int, int, int, error) {
	err := r.do(func(q *codecQueue) error {
		for _, s := range steps {
			var others [3]*Block
			k := 0
			for i, b := range r.buf {
				if i != cur {
					others[k] = b
					k++
				}
			}
			n, c, _ := s.plan(rows, ch)
			if err := s.run(q, r, r.buf[cur], others[0], others[1], others[2], rows); err != nil {
				return err
			}
			out := 0
			for i, b := range r.buf {
				if b == others[0] {
					out = i
				}
			}
			cur, rows, ch = out, n, c
		}
		return nil
	})
	return cur, rows, ch, err
}

// channelMajor downloads buffer i (rows × ch, time-major) as [ch][rows].
func (r *encRun) channelMajor(i, rows, ch int) ([]float32, error) {
	tm := make([]float32, rows*ch)
	if err := Download(r.e.dev, tm, r.buf[i], 0); err != nil {
		return nil, err
	}
	out := make([]float32, rows*ch)
	for t := 0; t < rows; t++ {
		for c := 0; c < ch; c++ {
			out[c*rows+t] = tm[t*ch+c]
		}
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// Steps. Each reads in (rows × its input channels) and writes its output to
// out, using t1 and t2 as scratch; in may be overwritten.

type encStep interface {
	// plan returns the output rows and channels for rows × ch of input and
	// the floats a buffer must hold (−1: rows do not fit the step).
	plan(rows, ch int) (outRows, outCh, elems int)
	run(q *codecQueue, r *encRun, in, out, t1, t2 *Block, rows int) error
}

// encConv is a causal conv (a strided one over blocks of stride rows).
type encConv struct {
	in, out, taps, dil, stride int
	w, bias                    *Block
}

func (s *encConv) plan(rows, ch int) (int, int, int) {
	if rows%s.stride != 0 {
		return 0, 0, -1
	}
	return rows / s.stride, s.out, max(rows*ch, rows/s.stride*s.out)
}

func (s *encConv) run(q *codecQueue, r *encRun, in, out, t1, t2 *Block, rows int) error {
	return s.apply(q, out.Ptr, in.Ptr, rows/s.stride, encPlain, 0, 0)
}

// Conv tails (EC_* in kernels/codec_encoder.cu).
const (
	encPlain = iota
	encRes
	encGamma
	encGELU
)

// apply enqueues codec_enc_conv over m output rows.
func (s *encConv) apply(q *codecQueue, out, x uintptr, m, mode int, res, gamma uintptr) error {
	if m == 0 {
		return nil
	}
	return kernel.CodecEncConv(q, [3]int{(m + 63) / 64, (s.out + 63) / 64, 1}, 256, kernel.Ptr(out), kernel.Ptr(x), devPtr(s.w), devPtr(s.bias), m, s.in, s.out, s.taps, s.dil, mode, kernel.Ptr(res), kernel.Ptr(gamma))
}

// encSnake is Snake.
type encSnake struct {
	ch         int
	alpha, inv *Block
}

func (s *encSnake) plan(rows, ch int) (int, int, int) { return rows, ch, rows * ch }
func (s *encSnake) run(q *codecQueue, r *encRun, in, out, t1, t2 *Block, rows int) error {
	return s.apply(q, out.Ptr, in.Ptr, rows)
}

func (s *encSnake) apply(q *codecQueue, out, x uintptr, rows int) error {
	n := rows * s.ch
	return kernel.CodecEncSnake(q, [3]int{max(1, min((n+255)/256, 1<<16)), 1, 1}, 256, kernel.Ptr(out), kernel.Ptr(x), devPtr(s.alpha), devPtr(s.inv), int64(n), s.ch)
}

// encResidual is a residual unit: Snake → dilated conv → Snake → 1×1 conv → + input.
type encResidual struct {
	snake1, snake2 *encSnake
	conv7, conv1   *encConv
}

func (s *encResidual) plan(rows, ch int) (int, int, int) {
	return rows, s.conv1.out, rows * max(ch, s.conv7.out)
}
func (s *encResidual) run(q *codecQueue, r *encRun, in, out, t1, t2 *Block, rows int) error {
	return firstErrFn(
		func() error { return s.snake1.apply(q, t1.Ptr, in.Ptr, rows) },
		func() error { return s.conv7.apply(q, t2.Ptr, t1.Ptr, rows, encPlain, 0, 0) },
		func() error { return s.snake2.apply(q, t2.Ptr, t2.Ptr, rows) },
		func() error { return s.conv1.apply(q, out.Ptr, t2.Ptr, rows, encRes, in.Ptr, 0) },
	)
}

// encNorm is a transformer's final RMSNorm (the decoder's kernel, FP32 out).
type encNorm struct {
	ch int
	w  *Block
}

func (s *encNorm) plan(rows, ch int) (int, int, int) { return rows, ch, rows * ch }
func (s *encNorm) run(q *codecQueue, r *encRun, in, out, t1, t2 *Block, rows int) error {
	return s.apply(q, out.Ptr, in.Ptr, rows)
}

func (s *encNorm) apply(q *codecQueue, out, x uintptr, rows int) error {
	return kernel.CodecRMSNorm(q, [3]int{rows, 1, 1}, 256, kernel.Ptr(out), 0, kernel.Ptr(x), devPtr(s.w), s.ch, s.ch, drama3.CodecNormEps)
}

// encBlock is a window-limited transformer layer (engine/cpu codecBlock).
type encBlock struct {
	dim, heads, window, ffn int
	wqkv, wo, w1, w3, w2    *encConv
	attnNorm, ffnNorm       *Block
	gammaAttn, gammaFF      *Block
}

func (s *encBlock) plan(rows, ch int) (int, int, int) {
	return rows, s.dim, rows * max(3*s.dim, s.ffn, ch)
}

func (s *encBlock) run(q *codecQueue, r *encRun, in, out, t1, t2 *Block, rows int) error {
	attn := &encNorm{ch: s.dim, w: s.attnNorm}
	ffn := &encNorm{ch: s.dim, w: s.ffnNorm}
	n := rows * s.ffn
	return firstErrFn(
		func() error { return attn.apply(q, t1.Ptr, in.Ptr, rows) },
		func() error { return s.wqkv.apply(q, t2.Ptr, t1.Ptr, rows, encPlain, 0, 0) },
		func() error {
			return kernel.CodecEncRope(q, [3]int{rows, 1, 1}, 256, devPtr(t2), devPtr(r.cos), devPtr(r.sin), s.dim)
		},
		func() error {
			return kernel.CodecEncAttention(q, [3]int{rows, s.heads, 1}, 128, devPtr(t1), devPtr(t2), s.dim, s.window)
		},
		func() error { return s.wo.apply(q, out.Ptr, t1.Ptr, rows, encGamma, in.Ptr, s.gammaAttn.Ptr) },
		func() error { return ffn.apply(q, t1.Ptr, out.Ptr, rows) },
		func() error { return s.w1.apply(q, t2.Ptr, t1.Ptr, rows, encPlain, 0, 0) },
		func() error { return s.w3.apply(q, in.Ptr, t1.Ptr, rows, encPlain, 0, 0) },
		func() error {
			return kernel.CodecEncSwiGLU(q, [3]int{max(1, min((n+255)/256, 1<<16)), 1, 1}, 256, devPtr(t2), devPtr(t2), devPtr(in), int64(n))
		},
		func() error { return s.w2.apply(q, out.Ptr, t2.Ptr, rows, encGamma, out.Ptr, s.gammaFF.Ptr) },
	)
}

// encConvNeXt is a downsample ConvNeXt block (engine/cpu codecConvNeXt).
type encConvNeXt struct {
	ch, kernel, hidden     int
	pw1, pw2               *encConv
	dw, dwb, nw, nb, gamma *Block
}

func (s *encConvNeXt) plan(rows, ch int) (int, int, int) {
	return rows, s.ch, rows * max(s.ch, s.hidden)
}
func (s *encConvNeXt) run(q *codecQueue, r *encRun, in, out, t1, t2 *Block, rows int) error {
	return firstErrFn(
		func() error {
			return kernel.CodecEncDwconvLayerNorm(q, [3]int{rows, 1, 1}, 256, devPtr(t1), devPtr(in), devPtr(s.dw), devPtr(s.dwb), devPtr(s.nw), devPtr(s.nb), s.ch, s.kernel, drama3.CodecConvNeXtEps)
		},
		func() error { return s.pw1.apply(q, t2.Ptr, t1.Ptr, rows, encGELU, 0, 0) },
		func() error { return s.pw2.apply(q, out.Ptr, t2.Ptr, rows, encGamma, in.Ptr, s.gamma.Ptr) },
	)
}

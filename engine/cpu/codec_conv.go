package cpu

import (
	"math"

	"proscenium/engine/drama3"
)

// The codec's signal-processing primitives: causal convolutions (the
// reference's CausalConvNet), transposed convolutions with the causal trim
// (CausalTransConvNet), depthwise convolution, Snake, LayerNorm and GELU.
//
// Signals are time-major ([time][channel]) windows of a whole decode: a
// codecSignal covers absolute times [start, start+n) of its stage. Index 0 is
// the start of the take; every convolution treats times before 0 as the
// reference's zero padding. Each output element is computed by the same code,
// in the same order, whatever window it is computed in and however the work is
// split over goroutines: that is what makes a chunked decode bit-identical to a
// whole one.

// codecSignal is times [start, start+n) of a stage's output, ch channels each.
type codecSignal struct {
	start, n, ch int
	data         []float32 // n·ch values, time-major
}

func (s codecSignal) end() int { return s.start + s.n }

// row returns the channels at absolute time t.
func (s codecSignal) row(t int) []float32 {
	i := (t - s.start) * s.ch
	return s.data[i : i+s.ch : i+s.ch]
}

// codecConv is a causal 1-D convolution with stride 1: for output time t,
//
//	y[t][o] = (Σ_k Σ_c w[o][k][c] · x[t − (K−1−k)·d][c]) + b[o]
//
// summed in the lane order of codec_dot.go (taps k outer, channels c inner),
// with x = 0 before time 0: the left padding (K−1)·d of CausalConvNet. (Its extra
// right padding is zero at stride 1.) A transposed convolution is stored in
// this form too, see newCodecTransConv.
type codecConv struct {
	in, out, kernel, dilation int
	w                         []float32 // [out][kernel][in]
	bias                      []float32 // [out]
}

// history is how many earlier input times one output reads.
func (c *codecConv) history() int { return (c.kernel - 1) * c.dilation }

// newCodecConv repacks a PyTorch Conv1d weight [out][in][K] (weight norm
// already folded) into the [out][K][in] order of codecConv.
func newCodecConv(w []float32, bias []float32, out, in, kernel, dilation int) *codecConv {
	return codecConvOf(drama3.PackCodecConv(w, bias, out, in, kernel, dilation))
}

// newCodecTransConv is a ConvTranspose1d as its equivalent causal conv at the
// input rate (drama3.PackCodecTransConv).
func newCodecTransConv(w []float32, bias []float32, in, out, kernel, stride int) *codecConv {
	return codecConvOf(drama3.PackCodecTransConv(w, bias, in, out, kernel, stride))
}

// apply computes dst's window from src, which must hold every input time the
// window reads: [max(0, dst.start − history), dst.end).
func (c *codecConv) apply(dst, src codecSignal) {
	if need := max(0, dst.start-c.history()); src.start > need || src.end() < dst.end() || src.ch != c.in || dst.ch != c.out {
		panic("codecConv: input window does not cover the output window")
	}
	// Times whose taps all lie at or after time 0 take the tiled path; the
	// first history() times of the take skip the taps in the zero padding.
	full := max(dst.start, c.history())
	tiles := (c.out + 3) / 4
	work := dst.n * c.out * c.kernel * c.in
	if dst.n >= 2*tiles {
		parallelFor(dst.n, work, func(lo, hi int) {
			c.rows(dst, src, dst.start+lo, dst.start+hi, 0, c.out, full)
		})
		return
	}
	parallelFor(tiles, work, func(lo, hi int) {
		c.rows(dst, src, dst.start, dst.end(), 4*lo, min(4*hi, c.out), full)
	})
}

// codecConvTimeBlock is the number of output times that share one pass over
// the weights (even).
const codecConvTimeBlock = 64

// rows computes output times [t0, t1) and channels [o0, o1).
func (c *codecConv) rows(dst, src codecSignal, t0, t1, o0, o1, full int) {
	t := t0
	for ; t < min(t1, full); t++ {
		c.edge(dst, src, t, o0, o1)
	}
	// Blocks of codecConvTimeBlock times, output-channel tiles outer: a
	// tile's weights stay in cache while the block's inputs stream past.
	for tb := t; tb+2 <= t1; tb += codecConvTimeBlock {
		te := tb + min(codecConvTimeBlock, (t1-tb)&^1)
		o := o0
		for ; o+4 <= o1; o += 4 {
			for tt := tb; tt < te; tt += 2 {
				c.tile4x2(dst, src, tt, o)
			}
		}
		for ; o < o1; o++ {
			for tt := tb; tt < te; tt++ {
				c.one(dst, src, tt, o)
			}
		}
		t = te
	}
	for ; t < t1; t++ {
		o := o0
		for ; o+4 <= o1; o += 4 {
			c.tile4x1(dst, src, t, o)
		}
		for ; o < o1; o++ {
			c.one(dst, src, t, o)
		}
	}
}

// one computes y[t][o] with every tap inside the take.
func (c *codecConv) one(dst, src codecSignal, t, o int) {
	var acc codecAcc
	for k := 0; k < c.kernel; k++ {
		acc.add(c.w[(o*c.kernel+k)*c.in:(o*c.kernel+k+1)*c.in], src.row(t-(c.kernel-1-k)*c.dilation))
	}
	dst.row(t)[o] = acc.sum() + c.bias[o]
}

// edge computes y[t][o] for t near the start of the take, skipping the taps
// in the zero padding.
func (c *codecConv) edge(dst, src codecSignal, t, o0, o1 int) {
	for o := o0; o < o1; o++ {
		var acc codecAcc
		for k := 0; k < c.kernel; k++ {
			if ti := t - (c.kernel-1-k)*c.dilation; ti >= 0 {
				acc.add(c.w[(o*c.kernel+k)*c.in:(o*c.kernel+k+1)*c.in], src.row(ti))
			}
		}
		dst.row(t)[o] = acc.sum() + c.bias[o]
	}
}

// tile4x2 computes y[t..t+1][o..o+3], each element as one does.
func (c *codecConv) tile4x2(dst, src codecSignal, t, o int) {
	var acc codecAcc4x2
	stride := c.kernel * c.in
	for k := 0; k < c.kernel; k++ {
		back := (c.kernel - 1 - k) * c.dilation
		base := (o*c.kernel + k) * c.in
		acc.add(c.w[base:base+3*stride+c.in], stride, src.row(t-back), src.row(t+1-back))
	}
	r0, r1 := dst.row(t), dst.row(t+1)
	for j := 0; j < 4; j++ {
		r0[o+j] = acc.sum(2*j) + c.bias[o+j]
		r1[o+j] = acc.sum(2*j+1) + c.bias[o+j]
	}
}

// tile4x1 computes y[t][o..o+3] with the 4×2 kernel, reading time t as
// both of its times (a lone row, such as a one-frame chunk's linears).
func (c *codecConv) tile4x1(dst, src codecSignal, t, o int) {
	var acc codecAcc4x2
	stride := c.kernel * c.in
	for k := 0; k < c.kernel; k++ {
		x := src.row(t - (c.kernel-1-k)*c.dilation)
		base := (o*c.kernel + k) * c.in
		acc.add(c.w[base:base+3*stride+c.in], stride, x, x)
	}
	r := dst.row(t)
	for j := 0; j < 4; j++ {
		r[o+j] = acc.sum(2*j) + c.bias[o+j]
	}
}

// pointwise applies a kernel-1 conv to one input row x: dst[o] = (Σ_c
// w[o][c]·x[c]) + b[o], as one computes it.
func (c *codecConv) pointwise(dst, x []float32) {
	for o := range dst[:c.out] {
		var acc codecAcc
		acc.add(c.w[o*c.in:(o+1)*c.in], x)
		dst[o] = acc.sum() + c.bias[o]
	}
}

// codecDepthwise is ConvNeXt's causal depthwise conv (groups = channels):
// y[t][c] = (Σ_k w[c][k] · x[t − (K−1−k)][c]) + b[c], zero before time 0.
type codecDepthwise struct {
	ch, kernel int
	w          []float32 // [ch][kernel], PyTorch's [ch][1][kernel]
	bias       []float32
}

func (d *codecDepthwise) history() int { return d.kernel - 1 }

func (d *codecDepthwise) apply(dst, src codecSignal) {
	if need := max(0, dst.start-d.history()); src.start > need || src.end() < dst.end() {
		panic("codecDepthwise: input window does not cover the output window")
	}
	parallelFor(dst.n, dst.n*d.ch*d.kernel, func(lo, hi int) {
		for t := dst.start + lo; t < dst.start+hi; t++ {
			y := dst.row(t)
			for c := 0; c < d.ch; c++ {
				var acc float32
				for k := 0; k < d.kernel; k++ {
					if ti := t - (d.kernel - 1 - k); ti >= 0 {
						acc += d.w[c*d.kernel+k] * src.row(ti)[c]
					}
				}
				y[c] = acc + d.bias[c]
			}
		}
	})
}

// codecSnake is Snake1d: y = x + (α + 1e−9)⁻¹ · sin(α·x)², per channel, in
// the reference's float32 order (the reciprocal is formed first).
type codecSnake struct {
	alpha, inv []float32
}

func newCodecSnake(alpha []float32) *codecSnake {
	s := &codecSnake{alpha: alpha, inv: make([]float32, len(alpha))}
	for i, a := range alpha {
		s.inv[i] = 1 / (a + 1e-9)
	}
	return s
}

// apply computes dst = snake(src) over src's window; dst may be src.
func (s *codecSnake) apply(dst, src codecSignal) {
	ch := len(s.alpha)
	parallelFor(src.n, src.n*ch*16, func(lo, hi int) {
		for i := lo * ch; i < hi*ch; i++ {
			c := i % ch
			x := src.data[i]
			sn := codecSin(s.alpha[c] * x)
			dst.data[i] = x + s.inv[c]*(sn*sn)
		}
	})
}

// codecLayerNorm normalises x over its channels: (x − mean)·rstd·w + b with
// the biased variance and eps inside the root, statistics in float64.
func codecLayerNorm(dst, x, w, b []float32, eps float64) {
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := sum / float64(len(x))
	var ss float64
	for _, v := range x {
		d := float64(v) - mean
		ss += d * d
	}
	m := float32(mean)
	rstd := float32(1 / math.Sqrt(ss/float64(len(x))+eps))
	for i, v := range x {
		dst[i] = (v-m)*rstd*w[i] + b[i]
	}
}

// codecGELU is the exact (erf) GELU: x/2 · (1 + erf(x/√2)).
func codecGELU(x float32) float32 {
	v := float64(x)
	return float32(0.5 * v * (1 + math.Erf(v/math.Sqrt2)))
}

// codecSin is sin(x) for Snake, rounded to float32: range reduction by π/2
// in float64 (Cody–Waite, two parts of π/2) and fdlibm's sin/cos kernel
// polynomials, about 1e−16 relative before the rounding, so the result is
// float32(sin(x)) but for the rare x whose value lies within that error of a
// float32 rounding boundary (then it is one ulp off). Arguments beyond 2²⁰
// go to math.Sin.
func codecSin(x float32) float32 {
	const (
		invPio2 = 6.36619772367581382433e-01 // 2/π
		pio2Hi  = 1.57079632673412561417e+00 // first 33 bits of π/2
		pio2Lo  = 6.07710050650619224932e-11 // π/2 − pio2Hi
	)
	xd := float64(x)
	if x == 0 {
		return x // keeps the sign of zero
	}
	if !(math.Abs(xd) < 1<<20) {
		return float32(math.Sin(xd))
	}
	k := math.RoundToEven(xd * invPio2)
	r := (xd - k*pio2Hi) - k*pio2Lo
	z := r * r
	var v float64
	if int64(k)&1 == 0 {
		const (
			s1 = -1.66666666666666324348e-01
			s2 = 8.33333333332248946124e-03
			s3 = -1.98412698298579493134e-04
			s4 = 2.75573137070700676789e-06
			s5 = -2.50507602534068634195e-08
			s6 = 1.58969099521155010221e-10
		)
		v = r + r*z*(s1+z*(s2+z*(s3+z*(s4+z*(s5+z*s6)))))
	} else {
		const (
			c1 = 4.16666666666666019037e-02
			c2 = -1.38888888888741095749e-03
			c3 = 2.48015872894767294178e-05
			c4 = -2.75573143513906633035e-07
			c5 = 2.08757232129817482790e-09
			c6 = -1.13596475577881948265e-11
		)
		v = 1 - 0.5*z + z*z*(c1+z*(c2+z*(c3+z*(c4+z*(c5+z*c6)))))
	}
	if int64(k)&2 != 0 {
		v = -v
	}
	return float32(v)
}

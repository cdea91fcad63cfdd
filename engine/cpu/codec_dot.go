package cpu

// The dot products of the codec's convolutions. Every output element sums its
// products in 8 lanes: product i (in k-major, c-minor order over the taps,
// restarting the lane count at each tap row) goes to lane i mod 8 of the
// row's first ⌊C/8⌋·8 products, the rest of each row to a scalar tail; each
// product is rounded to float32, then added. The result is
//
//	((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)) + tail + bias
//
// The AVX2 kernel (codec_dot_amd64.s) and the Go code compute exactly this
// (vector multiply then add, no fused multiply-add), so every path, tiled or
// not, gives the same bits for the same element on a machine.

// codecAcc is one output element's partial sums.
type codecAcc struct {
	lane [8]float32
	tail float32
}

// add accumulates the products of one tap row.
func (a *codecAcc) add(w, x []float32) {
	x = x[:len(w)]
	n8 := len(w) &^ 7
	for i := 0; i < n8; i += 8 {
		a.lane[0] += float32(w[i] * x[i])
		a.lane[1] += float32(w[i+1] * x[i+1])
		a.lane[2] += float32(w[i+2] * x[i+2])
		a.lane[3] += float32(w[i+3] * x[i+3])
		a.lane[4] += float32(w[i+4] * x[i+4])
		a.lane[5] += float32(w[i+5] * x[i+5])
		a.lane[6] += float32(w[i+6] * x[i+6])
		a.lane[7] += float32(w[i+7] * x[i+7])
	}
	for i := n8; i < len(w); i++ {
		a.tail += float32(w[i] * x[i])
	}
}

func (a *codecAcc) sum() float32 {
	l := &a.lane
	return (((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))) + a.tail
}

// codecAcc4x2 holds the partial sums of 4 outputs × 2 times; lanes[j] is
// output j/2 at time j%2, laid out for the assembly kernel.
type codecAcc4x2 struct {
	lanes [8][8]float32
	tails [8]float32
}

// add accumulates one tap row: weight rows w at w[j·stride:], j < 4, each n
// long, against input rows x0 and x1.
func (a *codecAcc4x2) add(w []float32, stride int, x0, x1 []float32) {
	n := len(x0)
	n8 := n &^ 7
	if n8 > 0 && codecHaveAVX2 {
		_ = w[3*stride+n-1]
		_ = x1[n-1]
		codecDot4x2AVX2(&w[0], stride, &x0[0], &x1[0], n8, &a.lanes)
	} else {
		codecDot4x2Go(w, stride, x0, x1, n8, &a.lanes)
	}
	for j := 0; j < 4; j++ {
		wr := w[j*stride : j*stride+n]
		for i := n8; i < n; i++ {
			a.tails[2*j] += float32(wr[i] * x0[i])
			a.tails[2*j+1] += float32(wr[i] * x1[i])
		}
	}
}

func (a *codecAcc4x2) sum(j int) float32 {
	l := &a.lanes[j]
	return (((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))) + a.tails[j]
}

// codecDot4x2Go is the portable form of codecDot4x2AVX2.
func codecDot4x2Go(w []float32, stride int, x0, x1 []float32, n8 int, lanes *[8][8]float32) {
	x0, x1 = x0[:n8], x1[:n8]
	for j := 0; j < 4; j++ {
		wr := w[j*stride : j*stride+n8]
		l0, l1 := &lanes[2*j], &lanes[2*j+1]
		for i := 0; i < n8; i += 8 {
			for l := 0; l < 8; l++ {
				l0[l] += float32(wr[i+l] * x0[i+l])
				l1[l] += float32(wr[i+l] * x1[i+l])
			}
		}
	}
}

// codecDot is the codec's float32 dot product (its quantizer's code search
// and its transformer's attention scores), accumulated in four float32
// partial sums in this order, products rounded before they are added: the
// order the CUDA codec kernels follow. The backbone and tower use Dot.
func codecDot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float32(a[i] * b[i])
		s1 += float32(a[i+1] * b[i+1])
		s2 += float32(a[i+2] * b[i+2])
		s3 += float32(a[i+3] * b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float32(a[i] * b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

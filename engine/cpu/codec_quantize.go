package cpu

import (
	"math"

	"proscenium/engine/drama3"
)

// Encode-side quantization (DownsampleResidualVectorQuantize.forward with
// descript-audio-codec's VectorQuantize): the semantic quantizer on z, the
// residual quantizers on z minus the semantic part, each one:
//
//	z_e = in_proj(residual)                      weight-normed 1×1 conv latent → 8
//	pick = argmax_j cos(z_e, codebook[j])        both L2-normalised; lowest index on ties
//	z_q = out_proj(z_e + (codebook[pick] − z_e)) the straight-through sum, as the reference forms it
//	residual −= z_q

// codecMaxCodebookDim bounds the codebook dimension (8 in S2) so that the
// per-row scratch of quantize lives on the stack.
const codecMaxCodebookDim = 16

// setEncode sets the quantizer's in_proj and normalises its codebook rows.
func (q *codecQuantizer) setEncode(in drama3.CodecConv) {
	dim := q.proj.in
	q.inProj = newCodecConv(in.W, in.Bias, in.Out, in.In, in.Kernel, in.Dilation)
	q.unit = drama3.CodecUnitCodebook(q.codebook[:q.size*dim], dim)
}

// quantize picks the codes of every frame of z (time-major, the pre-module's
// output) and each pick's margin, frame-major.
func (e *CodecEncoder) quantize(z codecSignal) ([]int32, []float32) {
	nb := 1 + len(e.residual)
	codes := make([]int32, z.n*nb)
	margins := make([]float32, z.n*nb)
	parallelFor(z.n, z.n*nb*z.ch*64, func(lo, hi int) {
		residual := make([]float32, z.ch)
		zq := make([]float32, z.ch)
		var ze, pick [codecMaxCodebookDim]float32
		for f := lo; f < hi; f++ {
			copy(residual, z.row(z.start+f))
			for i := 0; i < nb; i++ {
				q := &e.semantic
				if i > 0 {
					q = &e.residual[i-1]
				}
				codes[f*nb+i], margins[f*nb+i] = q.encodeOne(zq, residual, ze[:], pick[:])
				for j, v := range zq {
					residual[j] -= v
				}
			}
		}
	})
	return codes, margins
}

// encodeOne quantizes one residual row: it returns the pick and its margin
// and leaves the pick's projection in zq. ze and pick are scratch of at
// least the codebook dimension.
func (q *codecQuantizer) encodeOne(zq, residual, ze, pick []float32) (int32, float32) {
	dim := q.proj.in
	ze, pick = ze[:dim], pick[:dim]
	q.inProj.pointwise(ze, residual)
	var unit [codecMaxCodebookDim]float32
	u := unit[:dim]
	drama3.CodecNormalize(u, ze)
	best, second := float32(math.Inf(-1)), float32(math.Inf(-1))
	idx := 0
	for j := 0; j < q.size; j++ {
		c := codecDot(u, q.unit[j*dim:(j+1)*dim])
		if c > best {
			best, second, idx = c, best, j
		} else if c > second {
			second = c
		}
	}
	row := q.codebook[idx*dim : (idx+1)*dim]
	for d := range pick {
		pick[d] = ze[d] + (row[d] - ze[d])
	}
	q.proj.pointwise(zq, pick)
	return int32(idx), best - second
}

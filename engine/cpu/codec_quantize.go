package cpu

import (
	"fmt"
	"math"
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

// loadEncode reads the quantizer's in_proj and normalises its codebook rows.
func (q *codecQuantizer) loadEncode(l *codecLoader, prefix string, latent, dim int) {
	w := l.weightNormed(prefix+".in_proj", dim, latent, 1)
	b := l.f32(prefix+".in_proj.bias", dim)
	if w == nil || b == nil {
		return
	}
	q.inProj = newCodecConv(w, b, dim, latent, 1, 1)
	q.unit = make([]float32, len(q.codebook))
	for r := 0; r < q.size; r++ {
		codecNormalize(q.unit[r*dim:(r+1)*dim], q.codebook[r*dim:(r+1)*dim])
	}
}

// codecNormalize is F.normalize: x / max(‖x‖, 1e-12), in float32.
func codecNormalize(dst, x []float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	n := float32(max(math.Sqrt(ss), 1e-12))
	for i, v := range x {
		dst[i] = v / n
	}
}

func (e *CodecEncoder) loadQuantizers(l *codecLoader, g *CodecEncoderGeometry) {
	const sem = "quantizer.semantic_quantizer.quantizers.0"
	sh := l.wnShapeAt(sem + ".out_proj")
	if l.err != nil {
		return
	}
	if len(sh) != 3 || sh[0] != g.Latent || sh[2] != 1 {
		l.fail("codec: %s.out_proj weight has shape %v, want [%d, dim, 1]", sem, sh, g.Latent)
		return
	}
	dim := sh[1]
	if dim > codecMaxCodebookDim {
		l.fail("codec: codebook dimension %d is above the %d this encoder handles", dim, codecMaxCodebookDim)
		return
	}
	load := func(q *codecQuantizer, prefix string) {
		q.load(l, prefix, g.Latent, dim)
		if l.err == nil {
			q.loadEncode(l, prefix, g.Latent, dim)
		}
	}
	load(&e.semantic, sem)
	for i := 0; l.err == nil && l.has(fmt.Sprintf("quantizer.quantizer.quantizers.%d.codebook.weight", i)); i++ {
		var q codecQuantizer
		load(&q, fmt.Sprintf("quantizer.quantizer.quantizers.%d", i))
		e.residual = append(e.residual, q)
	}
	if l.err == nil && len(e.residual) == 0 {
		l.fail("codec: missing tensor quantizer.quantizer.quantizers.0.codebook.weight")
	}
	g.Codebooks = 1 + len(e.residual)
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
	codecNormalize(u, ze)
	best, second := float32(math.Inf(-1)), float32(math.Inf(-1))
	idx := 0
	for j := 0; j < q.size; j++ {
		c := Dot(u, q.unit[j*dim:(j+1)*dim])
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

package cpu

import (
	"fmt"

	"proscenium/engine/drama3"
)

// The RVQ sum (DownsampleResidualVectorQuantize.decode): each code picks an
// 8-dimensional codebook entry, a weight-normed 1×1 conv with bias projects it
// to the latent width, and the projections add up. Order (float32): the
// residual codebooks sum left to right, then the semantic projection is added
// to that sum: z = sem + (((r1 + r2) + r3) + …).

// codecQuantizer is one codebook and its out_proj.
type codecQuantizer struct {
	size     int
	codebook []float32 // [size][dim]
	proj     *codecConv
	// Encode only (codec_quantize.go): in_proj and the L2-normalised rows.
	inProj *codecConv
	unit   []float32
}

func newCodecQuantizer(q *drama3.CodecQuantizer) codecQuantizer {
	p := q.Proj
	return codecQuantizer{size: q.Size, codebook: q.Codebook, proj: newCodecConv(p.W, p.Bias, p.Out, p.In, p.Kernel, p.Dilation)}
}

// checkCodes refuses negative codes, naming the frame and codebook (the
// reference's embedding lookup fails on them too). codes[0] is frame base.
func (c *Codec) checkCodes(codes []int32, base int) error {
	nb := c.geom.Codebooks()
	for i, v := range codes {
		if v < 0 {
			return fmt.Errorf("codec: frame %d codebook %d: negative code %d", base+i/nb, i%nb, v)
		}
	}
	return nil
}

// rvq sums the projected codebook entries of frames [first, to); codes[0]
// is frame base.
func (c *Codec) rvq(codes []int32, base, first, to int, ws *CodecScratch) codecSignal {
	g := &c.geom
	nb, dim := g.Codebooks(), g.CodebookDim
	out := ws.signal(first, to-first, g.Latent)
	parallelFor(out.n, out.n*nb*dim*g.Latent, func(lo, hi int) {
		proj := make([]float32, g.Latent)
		for f := first + lo; f < first+hi; f++ {
			z := out.row(f)
			for i := 1; i < nb; i++ {
				q := &c.residual[i-1]
				code := min(int(codes[(f-base)*nb+i]), q.size-1) // clamp as the reference
				q.proj.pointwise(proj, q.codebook[code*dim:(code+1)*dim])
				if i == 1 {
					copy(z, proj)
				} else {
					Add(z, proj)
				}
			}
			code := min(int(codes[(f-base)*nb]), c.semantic.size-1)
			c.semantic.proj.pointwise(proj, c.semantic.codebook[code*dim:(code+1)*dim])
			for j, v := range proj {
				z[j] = v + z[j]
			}
		}
	})
	return out
}

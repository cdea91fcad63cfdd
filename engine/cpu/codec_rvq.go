package cpu

import "fmt"

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

func (q *codecQuantizer) load(l *codecLoader, prefix string, latent, dim int) {
	sh := l.shape(prefix + ".codebook.weight")
	if len(sh) != 2 || sh[1] != dim || sh[0] < 1 {
		l.fail("codec: tensor %s.codebook.weight has shape %v, want [entries %d]", prefix, sh, dim)
		return
	}
	q.size = sh[0]
	q.codebook = l.f32(prefix+".codebook.weight", q.size, dim)
	w := l.weightNormed(prefix+".out_proj", latent, dim, 1)
	b := l.f32(prefix+".out_proj.bias", latent)
	if w != nil {
		q.proj = newCodecConv(w, b, latent, dim, 1, 1)
	}
}

func (c *Codec) loadQuantizers(l *codecLoader, g *CodecGeometry) {
	const sem = "quantizer.semantic_quantizer.quantizers.0"
	vName := sem + ".out_proj.weight_v"
	if !l.has(vName) {
		vName = sem + ".out_proj.parametrizations.weight.original1"
	}
	sh := l.shape(vName)
	if l.err != nil {
		return
	}
	if len(sh) != 3 || sh[2] != 1 {
		l.fail("codec: %s.out_proj weight has shape %v, want [latent, dim, 1]", sem, sh)
		return
	}
	g.Latent, g.CodebookDim = sh[0], sh[1]
	c.semantic.load(l, sem, g.Latent, g.CodebookDim)
	g.SemanticCodes = c.semantic.size
	if l.has("quantizer.semantic_quantizer.quantizers.1.codebook.weight") {
		l.fail("codec: more than one semantic codebook (quantizer.semantic_quantizer.quantizers.1)")
	}
	for i := 0; l.has(fmt.Sprintf("quantizer.quantizer.quantizers.%d.codebook.weight", i)); i++ {
		var q codecQuantizer
		q.load(l, fmt.Sprintf("quantizer.quantizer.quantizers.%d", i), g.Latent, g.CodebookDim)
		if i > 0 && q.size != c.residual[0].size {
			l.fail("codec: residual codebook %d has %d entries, codebook 0 has %d", i, q.size, c.residual[0].size)
		}
		c.residual = append(c.residual, q)
	}
	if len(c.residual) == 0 {
		l.fail("codec: missing tensor quantizer.quantizer.quantizers.0.codebook.weight")
		return
	}
	g.ResidualBooks, g.ResidualCodes = len(c.residual), c.residual[0].size
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

package cpu

import (
	"fmt"
	"testing"

	"proscenium/engine/drama3"
)

// Codec.Plan is what the CUDA codec binds from: the stage order, kinds and
// shapes must be the reference's, and a Snake is always followed by the
// conv it feeds (the GPU fuses it into that conv's input).
func TestCodecPlanMatchesTheStages(t *testing.T) {
	for name, f := range loadCodecFixtures(t) {
		p := f.codec.Plan()
		g := p.Geometry
		if len(p.Stages) != len(f.codec.stages) || len(p.Residual) != g.ResidualBooks || p.Semantic.Entries != g.SemanticCodes {
			t.Fatalf("%s: %d stages, %d residual books, %d semantic entries; want %d, %d, %d", name,
				len(p.Stages), len(p.Residual), p.Semantic.Entries, len(f.codec.stages), g.ResidualBooks, g.SemanticCodes)
		}
		up, kinds := 1, ""
		for i, s := range p.Stages {
			up *= s.Up
			kinds += fmt.Sprint(s.Kind)
			if s.Kind == drama3.CodecStageSnake && (i+1 == len(p.Stages) ||
				(p.Stages[i+1].Kind != drama3.CodecStageConv && p.Stages[i+1].Kind != drama3.CodecStageTransConv)) {
				t.Errorf("%s: stage %d is a Snake not followed by a conv", name, i)
			}
			switch s.Kind {
			case drama3.CodecStageBlock:
				b := s.Block
				if b.Dim != g.PostDim || b.Window != g.Window || len(b.WQKV) != 3*b.Dim*b.Dim || len(b.W2) != b.Dim*b.FFN {
					t.Errorf("%s: stage %d: layer shapes %d/%d/%d/%d", name, i, b.Dim, b.Window, len(b.WQKV), len(b.W2))
				}
			case drama3.CodecStageConv, drama3.CodecStageTransConv, drama3.CodecStageResidual:
				c := s.Conv
				if len(c.W) != c.Out*c.Kernel*c.In || len(c.Bias) != c.Out || s.History != (c.Kernel-1)*c.Dilation {
					t.Errorf("%s: stage %d: conv %+v, history %d", name, i, c, s.History)
				}
			}
		}
		if up != g.SamplesPerFrame {
			t.Errorf("%s: stages upsample %d×, want %d", name, up, g.SamplesPerFrame)
		}
		// post layers, norm, 2 × (transposed conv, ConvNeXt), first conv, 4 × (Snake,
		// transposed conv, 3 residual units), Snake, last conv.
		want := ""
		for i := 0; i < g.PostLayers; i++ {
			want += fmt.Sprint(drama3.CodecStageBlock)
		}
		want += fmt.Sprint(drama3.CodecStageRMSNorm)
		for range g.UpsampleStrides {
			want += kindString(drama3.CodecStageTransConv, drama3.CodecStageConvNeXt)
		}
		want += fmt.Sprint(drama3.CodecStageConv)
		for range g.DecoderStrides {
			want += kindString(drama3.CodecStageSnake, drama3.CodecStageTransConv, drama3.CodecStageResidual, drama3.CodecStageResidual, drama3.CodecStageResidual)
		}
		want += kindString(drama3.CodecStageSnake, drama3.CodecStageConv)
		if kinds != want {
			t.Errorf("%s: stage kinds %s, want %s", name, kinds, want)
		}
	}
}

func kindString(k ...drama3.CodecStageKind) string {
	s := ""
	for _, x := range k {
		s += fmt.Sprint(x)
	}
	return s
}

package cpu

import (
	"fmt"
	"testing"
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
			if s.Kind == CodecStageSnake && (i+1 == len(p.Stages) ||
				(p.Stages[i+1].Kind != CodecStageConv && p.Stages[i+1].Kind != CodecStageTransConv)) {
				t.Errorf("%s: stage %d is a Snake not followed by a conv", name, i)
			}
			switch s.Kind {
			case CodecStageBlock:
				b := s.Block
				if b.Dim != g.PostDim || b.Window != g.Window || len(b.WQKV) != 3*b.Dim*b.Dim || len(b.W2) != b.Dim*b.FFN {
					t.Errorf("%s: stage %d: layer shapes %d/%d/%d/%d", name, i, b.Dim, b.Window, len(b.WQKV), len(b.W2))
				}
			case CodecStageConv, CodecStageTransConv, CodecStageResidual:
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
			want += fmt.Sprint(CodecStageBlock)
		}
		want += fmt.Sprint(CodecStageRMSNorm)
		for range g.UpsampleStrides {
			want += kindString(CodecStageTransConv, CodecStageConvNeXt)
		}
		want += fmt.Sprint(CodecStageConv)
		for range g.DecoderStrides {
			want += kindString(CodecStageSnake, CodecStageTransConv, CodecStageResidual, CodecStageResidual, CodecStageResidual)
		}
		want += kindString(CodecStageSnake, CodecStageConv)
		if kinds != want {
			t.Errorf("%s: stage kinds %s, want %s", name, kinds, want)
		}
	}
}

func kindString(k ...CodecStageKind) string {
	s := ""
	for _, x := range k {
		s += fmt.Sprint(x)
	}
	return s
}

package cpu

import (
	"fmt"
	"math"
	"slices"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// The codec decoder of Drama 3 (the S2 codec; shared/design/MODEL.md §5):
// codes [codebooks, T] → RVQ sum → window-limited causal transformer → two
// 2× upsample stages with ConvNeXt blocks → the DAC decoder → PCM at
// 44.1 kHz, SamplesPerFrame samples per frame. It follows SGLang-Omni's
// modded_dac.DAC.from_indices and rvq.DownsampleResidualVectorQuantize.decode.
//
// The weight map, geometry and constants are drama3's (drama3/codec.go);
// this file builds the decoder stages from drama3.CodecWeights.

// The constants of drama3 the arithmetic uses.
const (
	codecHeadDim     = drama3.CodecHeadDim
	codecNormEps     = drama3.CodecNormEps
	codecConvNeXtEps = drama3.CodecConvNeXtEps
	codecMaxFrames   = drama3.CodecMaxFrames
)

// Codec is a loaded codec decoder. It is immutable: Decode may run
// concurrently, each call with its own CodecScratch.
type Codec struct {
	geom     drama3.CodecGeometry
	semantic codecQuantizer
	residual []codecQuantizer
	stages   []codecStage // post-module, upsample and decoder, in order
}

// codecStage is one step of the pipeline after the RVQ sum. Output time t
// reads input times [t/up − history, t/up] (integer division): history
// earlier inputs plus its own.
type codecStage interface {
	label() string
	up() int
	history() int
	channels() int // output channels
	// run computes the output window [s, in.end()·up) for some
	// s ≤ outStart, from in, which covers every input that window reads.
	// It does not release in.
	run(in codecSignal, outStart int, ws *CodecScratch) codecSignal
}

// LoadCodecFile reads a codec.pth and builds its decoder.
func LoadCodecFile(path string, opt drama3.CodecOptions) (*Codec, error) {
	w, err := drama3.ReadCodecFile(path, opt)
	if err != nil {
		return nil, err
	}
	return NewCodec(w)
}

// LoadCodecBytes reads a codec.pth image held in memory (the demo codec).
func LoadCodecBytes(b []byte, name string, opt drama3.CodecOptions) (*Codec, error) {
	w, err := drama3.ReadCodecBytes(b, name, opt)
	if err != nil {
		return nil, err
	}
	return NewCodec(w)
}

// LoadCodec builds the decoder from a codec state dict (drama3.ReadCodec).
func LoadCodec(ts *checkpoint.TensorSet, opt drama3.CodecOptions) (*Codec, error) {
	w, err := drama3.ReadCodec(ts, opt)
	if err != nil {
		return nil, err
	}
	return NewCodec(w)
}

// NewCodec builds the decoder stages from the codec's float32 weights.
func NewCodec(w *drama3.CodecWeights) (*Codec, error) {
	c := &Codec{geom: w.Geometry}
	c.geom.UpsampleStrides = slices.Clone(w.Geometry.UpsampleStrides)
	c.geom.DecoderStrides = slices.Clone(w.Geometry.DecoderStrides)
	c.semantic = newCodecQuantizer(&w.Semantic)
	for i := range w.Residual {
		c.residual = append(c.residual, newCodecQuantizer(&w.Residual[i]))
	}
	c.stages = append(c.stages, newCodecPostModule(&w.Post, &c.geom)...)
	c.stages = append(c.stages, newCodecUpsample(w.Upsample)...)
	c.stages = append(c.stages, newCodecDecoder(&w.Decoder)...)
	spf := 1
	for _, st := range c.stages {
		spf *= st.up()
	}
	if spf != c.geom.SamplesPerFrame {
		return nil, fmt.Errorf("codec: stages upsample %d×, geometry says %d samples per frame", spf, c.geom.SamplesPerFrame)
	}
	c.geom.HistoryFrames = c.historyFrames()
	return c, nil
}

// Geometry returns the codec's shape.
func (c *Codec) Geometry() drama3.CodecGeometry {
	g := c.geom
	g.UpsampleStrides = append([]int(nil), g.UpsampleStrides...)
	g.DecoderStrides = append([]int(nil), g.DecoderStrides...)
	return g
}

// stageStarts maps the first PCM sample needed (from·SamplesPerFrame) back
// through the stages: starts[i] is the first input time stage i must see,
// starts[len(stages)] the first output sample; starts[0] is the first frame
// of the RVQ sum. Times before 0 clamp to 0 (the zero padding of the take).
func (c *Codec) stageStarts(from int) []int {
	starts := make([]int, len(c.stages)+1)
	starts[len(c.stages)] = from * c.geom.SamplesPerFrame
	for i := len(c.stages) - 1; i >= 0; i-- {
		st := c.stages[i]
		starts[i] = max(0, starts[i+1]/st.up()-st.history())
	}
	return starts
}

// historyFrames is the receptive field in frames. Every stride divides
// SamplesPerFrame, so each frame boundary maps back alike and the field is
// the same for every from far enough from the start. For S2 it is
// 8 layers × 127 (window) + 10 (the two ConvNeXt blocks, the first decoder
// conv and the residual units, rounded through the strides) = 1026 frames.
func (c *Codec) historyFrames() int {
	from := 1 << 40 // beyond any field (the window is at most codecMaxFrames)
	return from - c.stageStarts(from)[0]
}

// CodecStages are the intermediate outputs of a whole decode, channel-major
// as the reference lays them out: ZRVQ and ZPost [Latent][T], ZUp
// [Latent][4T] (for S2's two 2× stages), PCM [T·SamplesPerFrame].
type CodecStages struct {
	ZRVQ, ZPost, ZUp, PCM []float32
}

// Decode returns PCM samples [from·SamplesPerFrame, to·SamplesPerFrame) of the
// whole decode of codes, bit-identical to decoding frames [0, to) at once. codes
// holds frames [0, ≥ to), frame-major: code i of frame f at codes[f·Codebooks()+i].
// It reads frames from max(0, from − HistoryFrames). Codes above a codebook's
// last entry clamp to it, as the reference does; a negative code is an error.
// ws may be nil. Memory and time grow with to − from plus the receptive field:
// decode a long take in chunks, or push it through a CodecStream, which does
// not recompute the field.
func (c *Codec) Decode(codes []int32, from, to int, ws *CodecScratch) ([]float32, error) {
	return c.decode(codes, from, to, 0, ws, nil)
}

// DecodeStages decodes every frame of codes and also returns the stage
// outputs (for the goldens and the debug driver).
func (c *Codec) DecodeStages(codes []int32) (*CodecStages, error) {
	st := &CodecStages{}
	nf := len(codes) / c.geom.Codebooks()
	pcm, err := c.decode(codes, 0, nf, 0, nil, func(name string, s codecSignal) {
		switch name {
		case "rvq":
			st.ZRVQ = s.channelMajor()
		case "post":
			st.ZPost = s.channelMajor()
		case "upsample":
			st.ZUp = s.channelMajor()
		}
	})
	if err != nil {
		return nil, err
	}
	st.PCM = pcm
	return st, nil
}

// decode runs the pipeline for output frames [from, to), reading frames from
// max(first, the receptive field's start). first > 0 is for tests only: it
// cuts the history short. tap sees the RVQ sum and each stage's output
// (whole decodes only: windows then start at 0).
func (c *Codec) decode(codes []int32, from, to, first int, ws *CodecScratch, tap func(string, codecSignal)) ([]float32, error) {
	nb := c.geom.Codebooks()
	if len(codes)%nb != 0 {
		return nil, fmt.Errorf("codec: %d codes is not a whole number of %d-code frames", len(codes), nb)
	}
	if from < 0 || to <= from || to > len(codes)/nb {
		return nil, fmt.Errorf("codec: frames [%d, %d) outside the %d frames given", from, to, len(codes)/nb)
	}
	if to > codecMaxFrames {
		return nil, fmt.Errorf("codec: frame %d is past the reference's RoPE table of %d frames", to-1, codecMaxFrames)
	}
	if err := c.checkCodes(codes[:to*nb], 0); err != nil {
		return nil, err
	}
	if ws == nil {
		ws = &CodecScratch{}
	}
	starts := c.stageStarts(from)
	x := c.rvq(codes, 0, max(starts[0], first), to, ws)
	if tap != nil {
		tap("rvq", x)
	}
	for i, st := range c.stages {
		y := st.run(x, starts[i+1], ws)
		ws.release(x)
		x = y
		if tap != nil && (i+1 == len(c.stages) || c.stages[i+1].label() != st.label()) {
			tap(st.label(), x)
		}
	}
	s0 := from * c.geom.SamplesPerFrame
	pcm := make([]float32, (to-from)*c.geom.SamplesPerFrame)
	copy(pcm, x.data[(s0-x.start)*x.ch:])
	ws.release(x)
	return pcm, nil
}

// channelMajor returns a copy of the window as [ch][n].
func (s codecSignal) channelMajor() []float32 {
	out := make([]float32, s.n*s.ch)
	for t := 0; t < s.n; t++ {
		for c := 0; c < s.ch; c++ {
			out[c*s.n+t] = s.data[t*s.ch+c]
		}
	}
	return out
}

// CodecCodesFromNPY converts a codes array [codebooks, T] (int64 or int32, the
// reference's layout) to the frame-major int32 codes of Decode, returning the
// frame count. Values beyond int32 saturate, which keeps their meaning (above
// the last entry clamps; negative is refused by Decode).
func CodecCodesFromNPY(t *checkpoint.Tensor) ([]int32, int, error) {
	if len(t.Shape) != 2 || t.Shape[0] < 1 || t.Shape[1] < 1 {
		return nil, 0, fmt.Errorf("codes %s: shape %v, want [codebooks, frames]", t.Name, t.Shape)
	}
	v, err := checkpoint.TensorInt64s(t)
	if err != nil {
		return nil, 0, fmt.Errorf("codes %s: %w", t.Name, err)
	}
	nb, nf := t.Shape[0], t.Shape[1]
	out := make([]int32, nb*nf)
	for i := 0; i < nb; i++ {
		for f := 0; f < nf; f++ {
			out[f*nb+i] = int32(min(max(v[i*nf+f], math.MinInt32), math.MaxInt32))
		}
	}
	return out, nf, nil
}

// CodecCodesFromFrames flattens [frame][codebook] codes (the loop's layout)
// into Decode's frame-major int32 codes. Each frame must hold nb codes; values
// beyond int32 saturate, keeping their meaning.
func CodecCodesFromFrames(frames [][]int, nb int) ([]int32, error) {
	out := make([]int32, 0, len(frames)*nb)
	for f, fr := range frames {
		if len(fr) != nb {
			return nil, fmt.Errorf("codec: frame %d has %d codes, want %d", f, len(fr), nb)
		}
		for _, v := range fr {
			out = append(out, int32(min(max(v, math.MinInt32), math.MaxInt32)))
		}
	}
	return out, nil
}

package encode

import (
	"io"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
	"github.com/mewkiz/flac/meta"
)

// flacBlock is the block size of the frames: 4096 samples, libFLAC's
// default for 44.1/48 kHz.
const flacBlock = 4096

// flacEncoder writes 16-bit mono FLAC with mewkiz/flac, whose encoder picks
// the best of the constant, fixed-predictor and verbatim subframes for each
// block. Samples wait until a block is full; Close writes the short last
// block.
type flacEncoder struct {
	enc     *flac.Encoder
	rate    int
	pending []int32
	conv    []int16
}

func newFLAC(w io.Writer, rate int) (Encoder, error) {
	info := &meta.StreamInfo{
		BlockSizeMin: 16, BlockSizeMax: flacBlock, // a stream's last block may be short
		SampleRate: uint32(rate), NChannels: 1, BitsPerSample: 16,
		// NSamples 0 and a zero MD5 mean "unknown" (a stream); on a
		// seekable writer the encoder's Close fills them in.
	}
	enc, err := flac.NewEncoder(w, info)
	if err != nil {
		return nil, err
	}
	return &flacEncoder{enc: enc, rate: rate}, nil
}

func (e *flacEncoder) Write(pcm []float32) error {
	e.conv = toPCM16(e.conv, pcm)
	for _, s := range e.conv {
		e.pending = append(e.pending, int32(s))
	}
	for len(e.pending) >= flacBlock {
		if err := e.writeBlock(e.pending[:flacBlock]); err != nil {
			return err
		}
		e.pending = append(e.pending[:0], e.pending[flacBlock:]...)
	}
	return nil
}

func (e *flacEncoder) writeBlock(samples []int32) error {
	f := &frame.Frame{
		Header: frame.Header{
			HasFixedBlockSize: true,
			BlockSize:         uint16(len(samples)),
			SampleRate:        uint32(e.rate),
			Channels:          frame.ChannelsMono,
			BitsPerSample:     16,
		},
		Subframes: []*frame.Subframe{{
			SubHeader: frame.SubHeader{Pred: frame.PredVerbatim}, // analysed by the encoder
			Samples:   append([]int32(nil), samples...),
			NSamples:  len(samples),
		}},
	}
	return e.enc.WriteFrame(f)
}

func (e *flacEncoder) Close() error {
	if len(e.pending) > 0 {
		if err := e.writeBlock(e.pending); err != nil {
			return err
		}
		e.pending = nil
	}
	return e.enc.Close()
}

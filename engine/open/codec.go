package open

import (
	"bytes"
	"fmt"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// CodecEncoder is the CPU reference backend's encoder of a codec.pth: it
// turns a reference recording (a voice to clone) into the codec's codes in
// this process, the same codes the GPU worker's engine makes up to
// near-ties. The studio uses it where the loaded engine does not encode
// references itself, or fails to.
type CodecEncoder struct {
	enc *cpu.CodecEncoder
}

// LoadCodecEncoder reads the encoder of the codec.pth at path (a model's:
// drama3.CodecPath).
func LoadCodecEncoder(path string) (*CodecEncoder, error) {
	ts, err := checkpoint.ReadTorchFile(path)
	if err != nil {
		return nil, err
	}
	return newCodecEncoder(ts, path)
}

// LoadCodecEncoderBytes reads the encoder of a codec.pth held in memory;
// name says where it came from in errors.
func LoadCodecEncoderBytes(b []byte, name string) (*CodecEncoder, error) {
	ts, err := checkpoint.ReadTorch(bytes.NewReader(b), int64(len(b)), name)
	if err != nil {
		return nil, err
	}
	return newCodecEncoder(ts, name)
}

func newCodecEncoder(ts *checkpoint.TensorSet, name string) (*CodecEncoder, error) {
	enc, err := cpu.LoadCodecEncoder(ts, drama3.CodecOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &CodecEncoder{enc: enc}, nil
}

// EncodeReference encodes mono samples at the codec's rate (the
// api.ReferenceEncoder shape): codes frame-major, Codebooks per frame,
// codebook 0 first.
func (e *CodecEncoder) EncodeReference(samples []float32) (codes []int32, frames int, err error) {
	res, err := e.enc.Encode(samples)
	if err != nil {
		return nil, 0, err
	}
	return res.Codes, res.Frames, nil
}

// Codebooks is the number of codes per frame.
func (e *CodecEncoder) Codebooks() int { return e.enc.Geometry().Codebooks }

// CheckReferenceAudio refuses audio no encoder takes (empty, a sample not
// finite, more than the codec's frames) with the error every encoder gives,
// before an engine in another process is asked; spf is the samples per
// frame.
func CheckReferenceAudio(samples []float32, spf int) error {
	_, err := drama3.CodecEncodeFrames(samples, spf)
	return err
}

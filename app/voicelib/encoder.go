package voicelib

import (
	"crypto/sha256"
	"encoding/hex"

	"proscenium/engine/audio/decode"
	"proscenium/engine/checkpoint"
	"proscenium/engine/open"
)

// CPUEncoder is the CPU reference codec encoder of a codec.pth (asked of
// engine/open), named by the file's SHA-256.
type CPUEncoder struct {
	*open.CodecEncoder
	id string
}

// LoadCPUEncoder reads the encoder of the codec.pth at path (a model's:
// drama3.CodecPath), named by CodecFileID.
func LoadCPUEncoder(path string) (*CPUEncoder, error) {
	id, err := CodecFileID(path)
	if err != nil {
		return nil, err
	}
	enc, err := open.LoadCodecEncoder(path)
	if err != nil {
		return nil, err
	}
	return &CPUEncoder{CodecEncoder: enc, id: id}, nil
}

// CodecFileID is CodecID of the codec.pth at path, read as a stream.
func CodecFileID(path string) (string, error) {
	sum, err := checkpoint.HashFile(path)
	if err != nil {
		return "", err
	}
	return CodecIDOfSum(sum), nil
}

// LoadCPUEncoderBytes reads the encoder of a codec.pth held in memory.
func LoadCPUEncoderBytes(b []byte, name string) (*CPUEncoder, error) {
	enc, err := open.LoadCodecEncoderBytes(b, name)
	if err != nil {
		return nil, err
	}
	return &CPUEncoder{CodecEncoder: enc, id: CodecID(b)}, nil
}

// CodecID names a codec.pth by its bytes' SHA-256: the library keeps the
// codes an encoder of that codec made, and re-makes them for another.
func CodecID(codecPTH []byte) string {
	sum := sha256.Sum256(codecPTH)
	return CodecIDOfSum(sum[:])
}

// CodecIDOfSum is CodecID of a file whose SHA-256 is sum.
func CodecIDOfSum(sum []byte) string { return "codec-sha256:" + hex.EncodeToString(sum) }

// ID names the codec (CodecID).
func (e *CPUEncoder) ID() string { return e.id }

// EncodeRecording reads a reference recording (decode.ReadReference: WAV,
// FLAC, MP3 or Ogg Opus, 2–30 s, not silent) and returns its codes, one
// []int per frame, codebook 0 first.
func (e *CPUEncoder) EncodeRecording(recording []byte) ([][]int, error) {
	return EncodeRecording(e, recording)
}

// EncodeRecording is CPUEncoder.EncodeRecording with any encoder.
func EncodeRecording(e Encoder, recording []byte) ([][]int, error) {
	ref, err := decode.ReadReference(recording)
	if err != nil {
		return nil, err
	}
	flat, frames, err := e.EncodeReference(ref.Samples)
	if err != nil {
		return nil, err
	}
	nb := e.Codebooks()
	codes := make([][]int, frames)
	for f := range codes {
		codes[f] = make([]int, nb)
		for c := range codes[f] {
			codes[f][c] = int(flat[f*nb+c])
		}
	}
	return codes, nil
}

//go:build cuda

package main

import (
	"fmt"
	"sync"

	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// deviceReferences encodes reference recordings (voices to clone) with the
// model's codec encoder on the device: the worker engine's
// api.ReferenceEncoder, so that the studio and the speech API encode a
// voice on the GPU (cuda.CodecEncoder, the same codes as the CPU encoder up
// to near-ties). The encoder is read from the model's codec.pth at the first
// encode; its weights and an encode's buffers come from the device pool, so
// a memory cap refuses them with the numbers.
type deviceReferences struct {
	dev *cuda.Device
	dir string // the model's checkpoint directory

	mu  sync.Mutex // one encode at a time; guards enc
	enc *cuda.CodecEncoder
}

func (r *deviceReferences) EncodeReference(samples []float32) ([]int32, int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.enc == nil {
		w, err := drama3.ReadModelCodecEncoder(r.dir, drama3.CodecOptions{})
		if err != nil {
			return nil, 0, fmt.Errorf("the model's codec cannot encode references on the GPU: %w", err)
		}
		enc, err := cuda.NewCodecEncoder(r.dev, w)
		if err != nil {
			return nil, 0, fmt.Errorf("the model's codec cannot encode references on the GPU: %w", err)
		}
		r.enc = enc
	}
	res, err := r.enc.Encode(samples)
	if err != nil {
		return nil, 0, err
	}
	return res.Codes, res.Frames, nil
}

// close frees the encoder's weights.
func (r *deviceReferences) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.enc != nil {
		r.enc.Close()
		r.enc = nil
	}
}

//go:build cuda

package main

import (
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// codecPlan builds the CPU reference codec of weights w (its stage loaders
// are the one weight map) and returns its plan, which the GPU codec binds
// from: engine/cuda itself does not depend on engine/cpu.
func codecPlan(w *drama3.CodecWeights) (*drama3.CodecPlan, error) {
	ref, err := cpu.NewCodec(w)
	if err != nil {
		return nil, err
	}
	p := ref.Plan()
	return &p, nil
}

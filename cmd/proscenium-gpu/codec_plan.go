//go:build cuda

package main

import (
	"path/filepath"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// loadCodecPlan reads the codec of checkpoint directory dir through the CPU
// reference (its loader is the one weight map) and returns its plan, which
// the GPU codec binds from: engine/cuda itself does not depend on engine/cpu.
func loadCodecPlan(dir string) (*drama3.CodecPlan, error) {
	ref, err := cpu.LoadCodecFile(filepath.Join(dir, drama3.CodecFile), drama3.CodecOptions{})
	if err != nil {
		return nil, err
	}
	p := ref.Plan()
	return &p, nil
}

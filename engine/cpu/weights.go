package cpu

import (
	"fmt"

	"proscenium/engine/drama3"
)

// This file maps the bound weight tree (drama3.Weights, handles on stored
// tensors) to the float32 tree the CPU computes with.

// LoadModel reads every bound tensor the CPU computes with as float32:
// BF16/F16 widened exactly, routed experts dequantised from their FP8
// blocks, in the checkpoint's expert layout. The LM head is left out: only
// its semantic rows are needed, and drama3.NewHeads takes those. The
// backbone and tower parts are checked against the config.
func LoadModel(w *drama3.Weights) (*drama3.Model[[]float32], error) {
	m, err := drama3.Map(w.Config, &w.Model, func(name string, p *drama3.Param) ([]float32, error) {
		if p == nil || p == w.LMHead && p != w.Embed {
			return nil, nil
		}
		return w.Float32(p)
	})
	if err != nil {
		return nil, err
	}
	if err := drama3.CheckBackbone(&w.Config.Text, &m.Backbone, floats); err != nil {
		return nil, err
	}
	if err := drama3.CheckTower(&w.Config.Audio, w.Config.Text.HiddenSize, &m.Tower, floats); err != nil {
		return nil, err
	}
	return m, nil
}

// LoadBackboneDir reads a checkpoint directory and returns its text_config
// and float32 backbone.
func LoadBackboneDir(dir string) (*drama3.TextConfig, *drama3.Backbone[[]float32], error) {
	ck, err := drama3.Load(dir)
	if err != nil {
		return nil, nil, err
	}
	defer ck.Close()
	m, err := LoadModel(ck.Weights)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return &ck.Config.Text, &m.Backbone, nil
}

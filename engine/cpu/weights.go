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
func LoadModel(w *drama3.Weights) (*drama3.Model[[]float32], error) { return loadModel(w, nil) }

// loadModel is LoadModel reporting the stored bytes read of the total (the
// tensors it reads: all bound ones but an untied LM head).
func loadModel(w *drama3.Weights, progress func(done, total int64)) (*drama3.Model[[]float32], error) {
	var done, total int64
	if progress != nil {
		total = w.StoredBytes()
		if w.LMHead != nil && w.LMHead != w.Embed {
			total -= w.LMHead.Size
		}
		progress(0, total)
	}
	m, err := drama3.Map(w.Config, &w.Model, func(name string, p *drama3.Param) ([]float32, error) {
		if p == nil || p == w.LMHead && p != w.Embed {
			return nil, nil
		}
		v, err := w.Float32(p)
		if progress != nil && err == nil {
			done += p.Size
			if p.Scale != nil {
				done += p.Scale.Size
			}
			progress(done, total)
		}
		return v, err
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

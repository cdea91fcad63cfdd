package drama3

import (
	"fmt"

	"proscenium/engine/checkpoint"
)

// ShapedWeights binds a weight tree for cfg without a checkpoint: every
// tensor the weight map expects, BF16 (routed experts block-FP8 with float32
// scales when the config says fp8, fused layout), with no data behind it.
// Memory plans and benchmarks lay it out (the GPU worker's benchmarks fill
// the arena with random values on the device: cmd/proscenium-gpu
// syntheticBackbone).
func ShapedWeights(cfg *Config) (*Weights, error) {
	prefix := map[string]string{"backbone": "model.language_model.", "audio": "model.", "root": ""}
	var stored []*Param
	for _, e := range ExpectedTensors(cfg, true) {
		if e.Optional {
			continue
		}
		dt := checkpoint.BF16
		if e.Expert && cfg.Quant.FP8() {
			dt = checkpoint.F8E4M3
		}
		p := &Param{Name: prefix[e.Group] + e.Name, DType: dt, Shape: e.Shape, Size: e.NumElements() * int64(dt.Size())}
		stored = append(stored, p)
		if dt == checkpoint.F8E4M3 {
			n := len(e.Shape)
			shape := append(append([]int(nil), e.Shape[:n-2]...),
				(e.Shape[n-2]+cfg.Quant.BlockRows-1)/cfg.Quant.BlockRows, (e.Shape[n-1]+cfg.Quant.BlockCols-1)/cfg.Quant.BlockCols)
			s := &Param{Name: prefix[e.Group] + e.Scale, DType: checkpoint.F32, Shape: shape}
			s.Size = s.NumElements() * 4
			stored = append(stored, s)
		}
	}
	w, rep := Bind(cfg, stored, nil)
	if err := rep.Err(); err != nil {
		return nil, fmt.Errorf("shaped weights: %w", err)
	}
	return w, nil
}

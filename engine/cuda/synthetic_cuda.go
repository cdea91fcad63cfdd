//go:build cuda

package cuda

import (
	"fmt"
	"math"

	"proscenium/engine/checkpoint"
	"proscenium/engine/drama3"
)

// synthGrid is the grid of the grid-stride fill kernels.
var synthGrid = [3]int{4096, 1, 1}

// SyntheticBackbone builds a backbone of cfg with random weights generated
// on the device (kernels/synthetic.cu), for capacity rows, after admitting
// the exact bytes. Matrices are uniform with a variance of 1/cols (so
// activations keep their scale through the layers), FP8 experts random codes
// with scales to match, small vectors uniform in ±0.1.
func SyntheticBackbone(d *Device, cfg *drama3.Config, capacity int, seed uint64) (*Backbone, error) {
	return syntheticBackbone(d, cfg, capacity, seed, false, 0)
}

// SyntheticFramesBackbone is SyntheticBackbone for NewFrames: the memory
// tier (PlanTier) is decided for the whole frame backend, the tower, its
// extras and the prompt scratch (FramesBytes) and a codec of codecBytes
// (CodecBytes), which the caller allocates after; when they do not fit
// the device beside every expert, the last layers' experts are generated in
// pinned host memory. Only what the backbone admits is admitted here.
func SyntheticFramesBackbone(d *Device, cfg *drama3.Config, capacity int, seed uint64, codecBytes int64) (*Backbone, error) {
	return syntheticBackbone(d, cfg, capacity, seed, true, codecBytes)
}

func syntheticBackbone(d *Device, cfg *drama3.Config, capacity int, seed uint64, frames bool, codecBytes int64) (*Backbone, error) {
	w, err := SyntheticWeights(cfg)
	if err != nil {
		return nil, err
	}
	layout, err := LayoutWeights(w)
	if err != nil {
		return nil, err
	}
	need, plan, err := BackboneBytes(cfg, layout, capacity)
	if err != nil {
		return nil, err
	}
	model := need
	if frames {
		if model, _, err = FramesBytes(cfg, layout, capacity); err != nil {
			return nil, err
		}
		model += codecBytes
	}
	tier, err := d.PlanTier(TierModel(cfg, layout, model))
	if err != nil {
		return nil, err
	}
	if layout, err = layoutForTier(w, layout, tier); err != nil {
		return nil, err
	}
	need += tier.Stage - layout.HostBytes
	if err := d.Do(func() error { return d.Pool.Admit(need) }); err != nil {
		return nil, err
	}
	arena, err := d.Alloc(layout.Bytes)
	if err != nil {
		return nil, err
	}
	host, hostDev, stage, err := d.allocHostExperts(layout)
	if err != nil {
		d.Free(arena)
		return nil, err
	}
	err = d.Run(func(q *Queue) error {
		seed := seed
		next := func() Arg { seed++; return Arg(seed) }
		ptr := func(off int64) Arg { return Arg(uint64(arena.Ptr) + uint64(off)) }
		for p, t := range layout.Tensors {
			n := int64(1)
			for _, s := range t.Shape {
				n *= int64(s)
			}
			cols := t.Shape[len(t.Shape)-1]
			var err error
			switch {
			case t.DType == checkpoint.F32:
				err = q.Launch("synth_f32", synthGrid, 256, ptr(t.Off), I64Arg(n), next(), F32Arg(0.1))
			case p == w.Embed:
				err = q.Launch("synth_bf16", synthGrid, 256, ptr(t.Off), I64Arg(n), next(), F32Arg(0.5))
			default:
				err = q.Launch("synth_bf16", synthGrid, 256, ptr(t.Off), I64Arg(n), next(), F32Arg(float32(math.Sqrt(3/float64(cols)))))
			}
			if err != nil {
				return err
			}
		}
		for i, x := range layout.Experts {
			if !x.FP8 {
				return fmt.Errorf("synthetic backbone: BF16 experts are not generated (the benchmark is FP8)")
			}
			// A host layer's experts are written over the bus into its pinned block.
			base := uint64(arena.Ptr)
			if x.Host {
				base = uint64(hostDev[i].Ptr)
			}
			ptr := func(off int64) Arg { return Arg(base + uint64(off)) }
			// Codes have a mean square of about 2.3: scale to a variance of 1/cols.
			fill := func(w, s int64, mat int64, count, cols int) error {
				if err := q.Launch("synth_fp8", synthGrid, 256, ptr(w), I64Arg(int64(x.Experts)*mat), next()); err != nil {
					return err
				}
				sc := float32(1 / math.Sqrt(2.3*float64(cols)))
				return q.Launch("synth_f32", synthGrid, 256, ptr(s), I64Arg(int64(x.Experts*count)), next(), F32Arg(sc))
			}
			if err := firstErr(fill(x.GateUp, x.GateUpS, x.GateUpMatBytes, x.GateUpScaleCount, x.H),
				fill(x.Down, x.DownS, x.DownMatBytes, x.DownScaleCount, x.I)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = d.Sync()
	}
	dw := &DeviceWeights{Arena: arena, Layout: layout, Weights: w, Host: host, HostDevice: hostDev, Stage: stage, Tier: tier}
	if err != nil {
		dw.Free(d)
		return nil, err
	}
	b, err := NewBackbone(d, dw, plan)
	if err != nil {
		dw.Free(d)
		return nil, err
	}
	return b, nil
}

//go:build cuda

package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cuda"
	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
)

// synthGrid is the grid of the grid-stride fill kernels.
var synthGrid = [3]int{4096, 1, 1}

// syntheticFrames is what a synthetic backbone's frame backend adds on the
// device (the memory tier is decided for all of it): a codec of CodecBytes
// (cuda.CodecBytes), and Takes live together, each take beside the first
// with its own states, scratch and codec stream (CodecStreamBytes).
type syntheticFrames struct {
	CodecBytes, CodecStreamBytes int64
	Takes                        int
	// ZeroRouters zeroes every layer's router: each step routes to the
	// same top-k experts (ties go to the lowest ids), a forced hot set.
	ZeroRouters bool
}

// syntheticBackbone builds a backbone of cfg with random weights generated
// on the device (kernels/synthetic.cu), for capacity rows, after admitting
// the exact bytes. Matrices are uniform with a variance of 1/cols (so
// activations keep their scale through the layers), FP8 experts random codes
// with scales to match, small vectors uniform in ±0.1. With frames, the
// memory tier (cuda.PlanTier) is decided for the whole frame backend: the
// tower, its extras and the prompt scratch (FramesBytes), the codec and the
// other takes (syntheticFrames), which the caller allocates after; when
// they do not fit the device beside every expert, the last layers' experts
// (and the token embedding and LM head) are generated in pinned host
// memory. Only what the backbone takes is admitted here.
func syntheticBackbone(d *cuda.Device, cfg *drama3.Config, capacity int, seed uint64, frames *syntheticFrames) (*cuda.Backbone, error) {
	return syntheticBackboneSlots(d, cfg, capacity, 1, seed, frames)
}

// syntheticBackboneSlots is syntheticBackbone with the states of slots takes
// (cuda.PlanBackboneSlots: the B-row step); with frames, the tier counts
// the takes as LoadFrames does (batched when slots > 1: their states in the
// slots, a codec stream each beside the first).
func syntheticBackboneSlots(d *cuda.Device, cfg *drama3.Config, capacity, slots int, seed uint64, frames *syntheticFrames) (*cuda.Backbone, error) {
	w, err := drama3.ShapedWeights(cfg)
	if err != nil {
		return nil, err
	}
	layout, err := cuda.LayoutWeights(w)
	if err != nil {
		return nil, err
	}
	// bytes is what the backbone admits (need) and what the tier counts
	// (model) with prefill passes of rows rows.
	bytes := func(rows int) (need, model int64, plan *cuda.BackbonePlan, err error) {
		need, plan, err = cuda.BackbonePassBytes(cfg, layout, capacity, slots, rows)
		if err != nil {
			return 0, 0, nil, err
		}
		model = need
		if frames != nil {
			if model, _, err = cuda.FramesPassBytes(cfg, layout, capacity, slots, rows); err != nil {
				return 0, 0, nil, err
			}
			take := model - layout.Bytes // one take's state and scratch
			if slots > 1 {
				take = 0 // in the slots already
			}
			take += frames.CodecStreamBytes
			model += frames.CodecBytes + int64(max(frames.Takes, 1)-1)*take
		}
		return need, model, plan, nil
	}
	rows, err := cuda.PrefillPassRows(cfg.Text.NumExpertsPerTok, func(rows int) (bool, error) { // as LoadFrames chooses them
		_, model, _, err := bytes(rows)
		if err != nil {
			return false, err
		}
		p, err := d.PlanTier(cuda.TierModel(cfg, layout, model))
		return err == nil && cuda.WholeOnDevice(p, 0), nil
	})
	if err != nil {
		return nil, err
	}
	need, model, plan, err := bytes(rows)
	if err != nil {
		return nil, err
	}
	in := cuda.TierModel(cfg, layout, model)
	var tier cuda.TierPlan
	if frames == nil {
		tier, err = d.PlanTier(in)
	} else { // as LoadFrames: the tower's tables give way first
		var g cuda.TowerGeometry
		if g, err = cuda.TowerGeometryOf(&cfg.Audio); err == nil {
			tier, err = cuda.PlanTierTablesFirst(in, g, d.PlanTier)
		}
	}
	if err != nil {
		return nil, err
	}
	tier.PrefillRows = plan.Chunk
	if layout, err = cuda.LayoutForTier(w, layout, tier); err != nil {
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
	dw := &cuda.DeviceWeights{Arena: arena, Layout: layout, Weights: w, Tier: tier}
	if err := d.AllocHostExperts(dw); err != nil {
		d.Free(arena)
		return nil, err
	}
	routers := map[*drama3.Param]bool{}
	if frames != nil && frames.ZeroRouters {
		for i := range w.Layers {
			routers[w.Layers[i].MoE.Router] = true
		}
	}
	err = d.Run(func(q *cuda.Queue) error {
		seed := seed
		next := func() uint64 { seed++; return seed }
		// The tensors in name order: each takes the next seed, so the
		// weights are the same in every process (a map's order is not;
		// until session 10 every benchmark process had its own weights,
		// and its takes ended at other frames).
		params := slices.SortedFunc(maps.Keys(layout.Tensors), func(a, b *drama3.Param) int { return strings.Compare(a.Name, b.Name) })
		for _, p := range params {
			t := layout.Tensors[p]
			// The arena, or the host block of dense tensors, written over the bus.
			ptr := func(off int64) kernel.Ptr { return kernel.Ptr(dw.Block(t).Ptr).Add(off) }
			n := int64(1)
			for _, s := range t.Shape {
				n *= int64(s)
			}
			cols := t.Shape[len(t.Shape)-1]
			var err error
			switch {
			case t.DType == checkpoint.F32:
				err = kernel.SynthF32(q, synthGrid, 256, ptr(t.Off), n, next(), 0.1)
			case p == w.Embed:
				err = kernel.SynthBF16(q, synthGrid, 256, ptr(t.Off), n, next(), 0.5)
			case routers[p]:
				err = q.ZeroTensor(cuda.Tensor{Block: dw.Block(t), Off: t.Off}, t.Bytes())
			default:
				err = kernel.SynthBF16(q, synthGrid, 256, ptr(t.Off), n, next(), float32(math.Sqrt(3/float64(cols))))
			}
			if err != nil {
				return err
			}
		}
		for i, x := range layout.Experts {
			if !x.FP8 {
				return fmt.Errorf("synthetic backbone: BF16 experts are not generated (the benchmark is FP8)")
			}
			// A host layer's experts are written over the bus into its pinned
			// block (the home layer's too: the stage is filled from it).
			at := dw.Arena
			if x.Host {
				at = dw.HostDevice[i]
			}
			ptr := func(off int64) kernel.Ptr { return kernel.Ptr(at.Ptr).Add(off) }
			// Codes have a mean square of about 2.3: scale to a variance of 1/cols.
			fill := func(w, s int64, mat int64, count, cols int) error {
				if err := kernel.SynthFP8(q, synthGrid, 256, ptr(w), int64(x.Experts)*mat, next()); err != nil {
					return err
				}
				sc := float32(1 / math.Sqrt(2.3*float64(cols)))
				return kernel.SynthF32(q, synthGrid, 256, ptr(s), int64(x.Experts*count), next(), sc)
			}
			if err := fill(x.GateUp, x.GateUpS, x.GateUpMatBytes, x.GateUpScaleCount, x.H); err != nil {
				return err
			}
			if err := fill(x.Down, x.DownS, x.DownMatBytes, x.DownScaleCount, x.I); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = d.Sync()
	}
	if err != nil {
		dw.Free(d)
		return nil, err
	}
	b, err := cuda.NewBackbone(d, dw, plan)
	if err != nil {
		dw.Free(d)
		return nil, err
	}
	return b, nil
}

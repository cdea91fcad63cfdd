//go:build cuda

package cuda

import (
	"fmt"
	"unsafe"

	"gorgonia.org/cu"
)

// The prefill stage under a host tier (tier.go): one layer's worth of device
// memory that a prefill pass copies a host layer's experts onto, at the
// link's copy rate, before the layer's expert kernels read them there.
// A pass copies either the whole layer (stageExperts: one copy) or, once its
// rows are routed, only the experts they route to (stageRouted: routed
// staging). Routed staging waits for the routing (the stream drains and the
// pass's expert ids come back: one host round trip a layer, not timed
// alone) and then copies each run of consecutive routed experts the stage
// lacks, gate·up and down one copy each, with every expert's scales (0.2 MB
// a layer at the full geometry). Rows route near uniformly to the experts
// on random weights, so a pass of r rows uses about E·(1 − (1 − k/E)^r) of
// the E: at the full geometry (E 256, k 8) 129 for 22 rows, where the
// per-pair reads in place carried 176 experts, and 218 for 60 rows, where
// the whole copy carried 256; from about 200 rows it is every expert. A
// trained router concentrates, so fewer: with every router zeroed
// (bench-take -hot-experts) each layer's rows route to the same 8. The
// kernels then read the same bytes from the stage, so every result is the
// whole copy's or the in-place reads', bit for bit.
//
// The stage's contents are tracked as the work is enqueued (stageLayer,
// stageHas): a later pass, or the second part of a split pass, finds what
// is there and copies only what is missing. The home layer is always staged
// whole, so that every pass leaves it there for the decode steps: a pass
// that staged another layer copies it back whole. A pass that would copy
// whole layers anyway (from 32 rows at the full geometry) owes that copy
// either way and takes routed staging; a shorter one, which would read each
// pair's expert in place and leave the stage alone, takes it only where its
// saving pays the copy back (routedStagingPays: from 12 rows at the full
// geometry under a 22 GiB cap).

// StageRouted says whether a prefill pass under a host tier copies only
// the experts its rows route to (routedStaging; true, the product's way) or,
// as before, the whole layer when its (row, expert) pairs would read as many
// bytes, else reads each pair's expert in place over the bus (false:
// bench-take -host-stage layer compares the two; the results are the same
// bits). Set it between passes.
var StageRouted = true

// routedStagingAlways makes every pass of two rows or more stage its routed
// experts, whether or not routedStagingPays: the tests' tiny checkpoints
// have too few host layers for it to pay.
var routedStagingAlways bool

// routedStaging says whether a pass of n rows, k experts a row, stages the
// experts of x's layer its rows route to: StageRouted, and either the pass
// would otherwise copy the whole layer (stagePass: routed staging copies at
// most that, and the home layer's copy back is owed either way) or, where it
// would read each pair's expert in place, routedStagingPays.
func (w *DeviceWeights) routedStaging(x ExpertPack, n, k int) bool {
	if !StageRouted || w.Stage == nil || n < 2 {
		return false
	}
	if stagePass(x, n, k) {
		return true
	}
	hostLayers := w.Tier.Layers - w.Tier.DeviceLayers
	return routedStagingAlways || routedStagingPays(n, k, x.Experts, hostLayers)
}

// stageHoldsAll says whether the work enqueued so far leaves every expert
// of layer i on the stage.
func (w *DeviceWeights) stageHoldsAll(i int) bool {
	return w.Stage != nil && w.stageLayer == i && countTrue(w.stageHas) == len(w.stageHas)
}

// setStage notes the stage as holding layer i's experts (all of them or
// none) once the copies are on the stream.
func (w *DeviceWeights) setStage(i int, all bool) {
	E := w.Layout.Experts[i].Experts
	if len(w.stageHas) != E {
		w.stageHas = make([]bool, E)
	}
	for e := range w.stageHas {
		w.stageHas[e] = all
	}
	w.stageLayer = i
}

// stageExperts enqueues on q the copy of layer i's experts from host memory
// onto the stage in one copy, unless the work enqueued before leaves every
// one of them there, and returns the stage.
func (w *DeviceWeights) stageExperts(q *Queue, i int) (*Block, error) {
	if w.stageHoldsAll(i) {
		return w.Stage, nil
	}
	w.stageLayer = -1 // until the copy is on the stream
	span := w.Layout.Experts[i].SpanBytes()
	if err := q.CopyFromHost(w.Stage, w.Host[i], span); err != nil {
		return nil, err
	}
	w.setStage(i, true)
	w.StagedBytes += span
	return w.Stage, nil
}

// stageRouted enqueues on q the copies of layer i's experts that want names
// and the stage lacks (expertRuns), with every expert's scales when the
// stage held another layer, and returns the stage. Wanting every expert of
// a layer not there is one whole copy (stageExperts).
func (w *DeviceWeights) stageRouted(q *Queue, i int, want []bool) (*Block, error) {
	x := w.Layout.Experts[i]
	if w.stageLayer != i {
		if countTrue(want) == len(want) {
			return w.stageExperts(q, i)
		}
		w.stageLayer = -1 // until the copies are on the stream
		if x.FP8 {
			for _, r := range [][2]int64{{x.GateUpS, int64(x.GateUpScaleCount)}, {x.DownS, int64(x.DownScaleCount)}} {
				bytes := int64(x.Experts) * r[1] * 4
				if err := q.CopyFromHostRange(w.Stage, w.Host[i], r[0], bytes); err != nil {
					return nil, err
				}
				w.StagedBytes += bytes
			}
		}
		w.setStage(i, false)
	}
	for _, run := range expertRuns(want, w.stageHas) {
		from, n := int64(run[0]), int64(run[1]-run[0])
		for _, m := range [][2]int64{{x.GateUp, x.GateUpMatBytes}, {x.Down, x.DownMatBytes}} {
			if err := q.CopyFromHostRange(w.Stage, w.Host[i], m[0]+from*m[1], n*m[1]); err != nil {
				w.stageLayer = -1
				return nil, err
			}
			w.StagedBytes += n * m[1]
		}
		for e := run[0]; e < run[1]; e++ {
			w.stageHas[e] = true
		}
	}
	return w.Stage, nil
}

// homeStage enqueues on q the copy of the home layer's experts onto the
// stage unless it holds them whole (at the first reset after the load, or
// after a pass that failed part-way).
func (w *DeviceWeights) homeStage(q *Queue) error {
	if w.Stage == nil || w.home < 0 {
		return nil
	}
	_, err := w.stageExperts(q, w.home)
	return err
}

// stageRoutedExperts waits for the routing of a pass's n·K (row, expert)
// pairs in ids (device, int32), reads it back and stages layer L's experts
// it routes to (stageRouted).
func (b *Backbone) stageRoutedExperts(q *Queue, L *backboneLayer, ids *Block, pairs int) (*Block, error) {
	if b.routed == nil || int64(pairs)*4 > b.routed.Bytes {
		return nil, fmt.Errorf("backbone: routed staging of %d pairs without a pinned buffer for them", pairs)
	}
	if err := cu.MemcpyDtoHAsync(b.routed.Host, cu.DevicePtr(ids.Ptr), int64(pairs)*4, q.Stream()); err != nil {
		return nil, err
	}
	if err := q.Stream().Synchronize(); err != nil {
		return nil, err
	}
	want, err := routedSet(unsafe.Slice((*int32)(b.routed.Host), pairs), L.x.Experts)
	if err != nil {
		return nil, fmt.Errorf("backbone: layer %d: %w", L.layer, err)
	}
	return b.W.stageRouted(q, L.layer, want)
}

//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/drama3"
)

// PlanTier decides where model's bytes go on d now (PlanTier with the
// device's free memory, the pool's headroom and device cap, and the host's
// available memory). It allocates nothing.
func (d *Device) PlanTier(model TierInput) (TierPlan, error) {
	free, _, err := d.MemInfo()
	if err != nil {
		return TierPlan{}, fmt.Errorf("memory tier: device memory info: %w", err)
	}
	s := d.Pool.Stats(DeviceMem)
	in := model
	in.DeviceFree, in.Headroom, in.Cap, in.CapHeld = free, d.Pool.Headroom(), s.Cap, s.Used
	in.HostReserve = d.HostReserve
	return PlanTierHere(in)
}

// LayoutForTier is layout as PlanTier placed it: the same when the model
// fits; when not, the last layers' experts and the sparse-read dense
// tensors in host memory.
func LayoutForTier(w *drama3.Weights, layout *WeightLayout, p TierPlan) (*WeightLayout, error) {
	if p.Tier == TierDevice {
		return layout, nil
	}
	return LayoutWeightsTier(w, p.DeviceLayers, p.HostDense > 0)
}

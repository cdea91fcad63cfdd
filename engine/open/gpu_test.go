package open

import (
	"errors"
	"strings"
	"testing"

	"proscenium/engine/cuda"
)

// The GPU's memory tier for the demo checkpoint, asked without a GPU: the
// whole and the least it runs with, and the tier under a cap and on a
// device with given free memory.
func TestGPUTiers(t *testing.T) {
	dir := needTinyDir(t)
	m, err := GPUMemoryOf(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := GPUModelBytes(dir)
	if err != nil || m.Whole+m.VoiceCache != whole || m.VoiceCache != GPUVoiceCacheBytes || m.Layers != 4 || m.Dense+4*m.LayerExperts != m.Whole || m.UnderCap != "" {
		t.Fatalf("%+v (GPUModelBytes %d, %v)", m, whole, err)
	}
	if s, err := GPUTierUnderCap(dir, m.Whole); err != nil || !strings.HasPrefix(s, "fits on the device") {
		t.Errorf("a cap of the whole: %q %v", s, err)
	}
	// One layer's experts short: the last two layers' go to host memory
	// (one layer's worth is the prefill stage).
	s, err := GPUTierUnderCap(dir, m.Whole-1)
	if err != nil || !strings.Contains(s, "(the experts of 2 of 4 layers") {
		t.Errorf("a cap a byte short: %q %v", s, err)
	}
	if _, err := GPUTierUnderCap(dir, m.Dense); !errors.Is(err, ErrGPUDoesNotFit) || !errors.Is(err, cuda.ErrOverCap) {
		t.Errorf("a cap of the dense part alone (no stage): %v", err)
	}
	if m, err := GPUMemoryOf(dir, m.Dense); err != nil || !strings.HasPrefix(m.UnderCap, "refused: the model does not fit") {
		t.Errorf("GPUMemoryOf under the dense part: %+v %v", m, err)
	}
	// On a device: the free memory less the headroom is the budget.
	if s, err := GPUTierOn(dir, m.Whole+cuda.DefaultHeadroom, 0); err != nil || !strings.HasPrefix(s, "fits on the device") {
		t.Errorf("a device with room: %q %v", s, err)
	}
	if s, err := GPUTierOn(dir, m.Whole+cuda.DefaultHeadroom, m.Whole-1); err != nil || !strings.HasPrefix(s, "experts in host memory") {
		t.Errorf("a device with room under a cap a byte short: %q %v", s, err)
	}
	if _, err := GPUTierOn(dir, cuda.DefaultHeadroom, 0); !errors.Is(err, ErrGPUDoesNotFit) || errors.Is(err, cuda.ErrOverCap) {
		t.Errorf("a device with nothing free: %v", err)
	}
}

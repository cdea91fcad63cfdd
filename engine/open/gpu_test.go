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
	m, err := GPUMemoryOf(dir, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := GPUModelBytes(dir, 0)
	if err != nil || m.Whole+m.VoiceCache != whole || m.VoiceCache != GPUVoiceCacheBytes || m.Layers != 4 || m.Dense+3*m.LayerExperts+m.HostDense != m.Whole+m.ExpertCache || m.ExpertCache <= 0 || m.HostDense <= 0 || m.UnderCap != "" {
		t.Fatalf("%+v (GPUModelBytes %d, %v)", m, whole, err)
	}
	if s, err := GPUTierUnderCap(dir, 0, m.Whole); err != nil || !strings.HasPrefix(s, "fits on the device") {
		t.Errorf("a cap of the whole: %q %v", s, err)
	}
	// A byte short: the last layer's experts go to host memory and the
	// prefill stage, which a step reads them from, with the token embedding
	// and LM head in host memory too.
	s, err := GPUTierUnderCap(dir, 0, m.Whole-1)
	if err != nil || !strings.Contains(s, "(the experts of 4 of 4 layers to start with, one on the prefill stage;") {
		t.Errorf("a cap a byte short: %q %v", s, err)
	}
	if s, err := GPUTierUnderCap(dir, 0, m.Dense); err != nil || !strings.Contains(s, "(the experts of 1 of 4 layers to start with, one on the prefill stage;") {
		t.Errorf("a cap of the least: %q %v", s, err)
	}
	if _, err := GPUTierUnderCap(dir, 0, m.Dense-1); !errors.Is(err, ErrGPUDoesNotFit) || !errors.Is(err, cuda.ErrOverCap) {
		t.Errorf("a cap a byte below the least: %v", err)
	}
	if m, err := GPUMemoryOf(dir, 0, m.Dense-1); err != nil || !strings.HasPrefix(m.UnderCap, "refused: the model does not fit") {
		t.Errorf("GPUMemoryOf under the dense part: %+v %v", m, err)
	}
	// On a device: the free memory less the headroom is the budget.
	if s, err := GPUTierOn(dir, 0, m.Whole+cuda.DefaultHeadroom, 0); err != nil || !strings.HasPrefix(s, "fits on the device") {
		t.Errorf("a device with room: %q %v", s, err)
	}
	if s, err := GPUTierOn(dir, 0, m.Whole+cuda.DefaultHeadroom, m.Whole-1); err != nil || !strings.HasPrefix(s, "experts in host memory") {
		t.Errorf("a device with room under a cap a byte short: %q %v", s, err)
	}
	if _, err := GPUTierOn(dir, 0, cuda.DefaultHeadroom, 0); !errors.Is(err, ErrGPUDoesNotFit) || errors.Is(err, cuda.ErrOverCap) {
		t.Errorf("a device with nothing free: %v", err)
	}
}

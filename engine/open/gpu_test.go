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
	m, err := GPUMemoryOf(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := GPUModelBytes(dir, Options{})
	if err != nil || m.Whole+m.VoiceCache != whole || m.VoiceCache != cuda.DefaultPrefixCacheBytes || m.Layers != 4 || m.Dense+3*m.LayerExperts+m.HostDense != m.Whole+m.ExpertCache || m.ExpertCache <= 0 || m.HostDense <= 0 || m.UnderCap != "" {
		t.Fatalf("%+v (GPUModelBytes %d, %v)", m, whole, err)
	}
	if s, err := GPUTierUnderCap(dir, Options{MemoryCap: m.Whole}); err != nil || !strings.HasPrefix(s, "fits on the device") {
		t.Errorf("a cap of the whole: %q %v", s, err)
	}
	// A byte short: the last layer's experts go to host memory and the
	// prefill stage, which a step reads them from, with the token embedding
	// and LM head in host memory too.
	s, err := GPUTierUnderCap(dir, Options{MemoryCap: m.Whole - 1})
	if err != nil || !strings.Contains(s, "(the experts of 4 of 4 layers to start with, one on the prefill stage;") {
		t.Errorf("a cap a byte short: %q %v", s, err)
	}
	if s, err := GPUTierUnderCap(dir, Options{MemoryCap: m.Dense}); err != nil || !strings.Contains(s, "(the experts of 1 of 4 layers to start with, one on the prefill stage;") {
		t.Errorf("a cap of the least: %q %v", s, err)
	}
	if _, err := GPUTierUnderCap(dir, Options{MemoryCap: m.Dense - 1}); !errors.Is(err, ErrGPUDoesNotFit) || !errors.Is(err, cuda.ErrOverCap) {
		t.Errorf("a cap a byte below the least: %v", err)
	}
	if m, err := GPUMemoryOf(dir, Options{MemoryCap: m.Dense - 1}); err != nil || !strings.HasPrefix(m.UnderCap, "refused: the model does not fit") {
		t.Errorf("GPUMemoryOf under the dense part: %+v %v", m, err)
	}
	// On a device: the free memory less the headroom is the budget.
	if s, err := GPUTierOn(dir, m.Whole+cuda.DefaultHeadroom, Options{}); err != nil || !strings.HasPrefix(s, "fits on the device") {
		t.Errorf("a device with room: %q %v", s, err)
	}
	if s, err := GPUTierOn(dir, m.Whole+cuda.DefaultHeadroom, Options{MemoryCap: m.Whole - 1}); err != nil || !strings.HasPrefix(s, "experts in host memory") {
		t.Errorf("a device with room under a cap a byte short: %q %v", s, err)
	}
	if _, err := GPUTierOn(dir, cuda.DefaultHeadroom, Options{}); !errors.Is(err, ErrGPUDoesNotFit) || errors.Is(err, cuda.ErrOverCap) {
		t.Errorf("a device with nothing free: %v", err)
	}
	// The voice cache asked for is what the layout holds for it, granted
	// from what is left beside the whole model.
	big := Options{VoiceCacheBytes: 3 << 30}
	if m2, err := GPUMemoryOf(dir, big); err != nil || m2.VoiceCache != 3<<30 || m2.Whole != m.Whole {
		t.Errorf("a 3 GiB voice cache: %+v %v", m2, err)
	}
	if n, err := GPUModelBytes(dir, big); err != nil || n != m.Whole+3<<30 {
		t.Errorf("GPUModelBytes with a 3 GiB voice cache: %d %v, want %d", n, err, m.Whole+3<<30)
	}
	big.MemoryCap = m.Whole + 1<<30
	if s, err := GPUTierUnderCap(dir, big); err != nil || !strings.HasPrefix(s, "fits on the device") || !strings.Contains(s, "cached voices up to 1.00 GiB of it") {
		t.Errorf("a 3 GiB voice cache under a cap 1 GiB over the model: %q %v; want it to fit, the cache granted the 1 GiB left", s, err)
	}
	// No size set: a device with room gives the cache an eighth of it, up
	// to cuda.MaxAutoVoiceCache; a size set is kept.
	if m.VoiceCacheUpTo != cuda.MaxAutoVoiceCache {
		t.Errorf("no voice cache size set: up to %d, want %d", m.VoiceCacheUpTo, int64(cuda.MaxAutoVoiceCache))
	}
	if m2, _ := GPUMemoryOf(dir, big); m2.VoiceCacheUpTo != 0 {
		t.Errorf("a 3 GiB voice cache set: up to %d, want nothing more", m2.VoiceCacheUpTo)
	}
	for _, c := range []struct {
		room  int64
		opts  Options
		cache string
	}{
		{16 << 30, Options{}, "cached voices up to 2.00 GiB of it"},
		{100 << 30, Options{}, "cached voices up to 8.00 GiB of it"},
		{100 << 30, Options{VoiceCacheBytes: 512 << 20}, "cached voices up to 512.0 MiB of it"},
	} {
		if s, err := GPUTierOn(dir, m.Whole+cuda.DefaultHeadroom+c.room, c.opts); err != nil || !strings.Contains(s, c.cache) {
			t.Errorf("a device with %d bytes beside the model, voice cache set to %d: %q %v; want %q", c.room, c.opts.VoiceCacheBytes, s, err, c.cache)
		}
	}
	if _, err := GPUModelBytes(dir, Options{VoiceCacheBytes: -1}); err == nil {
		t.Error("a negative voice cache was taken")
	}
}

package cuda

import (
	"strings"
	"testing"
)

// TestDeltaNetChunkSwitch pins $PROSCENIUM_GPU_DN_CHUNK's spellings (dnc13).
func TestDeltaNetChunkSwitch(t *testing.T) {
	for s, want := range map[string]deltaNetChunkKernels{"": deltaNetChunkDefault, "intra": deltaNetChunkIntra, "long": deltaNetChunkIntraLong, "old": deltaNetChunkOld} {
		if got, err := parseDeltaNetChunk(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, bad := range []string{"1", "new"} {
		if _, err := parseDeltaNetChunk(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	for _, c := range []struct {
		m    deltaNetChunkKernels
		n    int
		want bool
	}{{deltaNetChunkOld, 700, false}, {deltaNetChunkIntraLong, 127, false}, {deltaNetChunkIntraLong, 128, true},
		{deltaNetChunkIntra, 1, true}, {deltaNetChunkIntra, 60, true}} {
		if got := c.m.tiledIntra(c.n); got != c.want {
			t.Errorf("mode %d, %d rows: tiled intra %v, want %v", c.m, c.n, got, c.want)
		}
	}
}

func TestDeltaNetPrepSetting(t *testing.T) {
	for _, v := range []string{"", "tiled", "old"} {
		if err := DeltaNetPrepSetting(v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, v := range []string{"new", "on", "Tiled"} {
		if err := DeltaNetPrepSetting(v); err == nil || !strings.Contains(err.Error(), DeltaNetPrepEnv) {
			t.Errorf("%q: error %v, want one naming %s", v, err, DeltaNetPrepEnv)
		}
	}
	// Drama 3's geometry: 16 rows a block (24 KB of conv outputs); a conv
	// of more taps than the kernel holds: the old prep.
	g := DeltaNetGeometry{KeyHeads: 16, ValueHeads: 32, KeyDim: 128, ValueDim: 128, ConvKernel: 4}
	if got := g.tiledPrepRows(); got != 16 {
		t.Errorf("full geometry: %d rows a block, want 16", got)
	}
	g.KeyDim, g.ValueDim = 512, 512
	if got := g.tiledPrepRows(); got != 7 {
		t.Errorf("a 1536-wide window: %d rows a block, want 7 (42 KB)", got)
	}
	g.ConvKernel = 5
	if got := g.tiledPrepRows(); got != 0 {
		t.Errorf("5 conv taps: %d rows a block, want 0 (the old prep)", got)
	}
}

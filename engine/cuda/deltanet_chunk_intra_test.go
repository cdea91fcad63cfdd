package cuda

import "testing"

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

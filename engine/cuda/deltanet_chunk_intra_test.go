package cuda

import "testing"

// TestDeltaNetChunkSwitch pins $PROSCENIUM_GPU_DN_CHUNK's spellings (dnc13).
func TestDeltaNetChunkSwitch(t *testing.T) {
	for s, want := range map[string]deltaNetChunkKernels{"": deltaNetChunkDefault, "new": deltaNetChunkNew, "intra": deltaNetChunkIntra, "old": deltaNetChunkOld} {
		if got, err := parseDeltaNetChunk(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := parseDeltaNetChunk("1"); err == nil {
		t.Error(`"1" accepted`)
	}
}

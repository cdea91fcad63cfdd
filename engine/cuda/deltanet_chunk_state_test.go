package cuda

import "testing"

// TestDeltaNetStateTiledShared pins deltanet_chunk_state_tiled's shared
// memory to the kernel's layout (kernels/deltanet_chunk.cu: 224·dkp + 10496
// floats) and the switch's spellings.
func TestDeltaNetStateTiledShared(t *testing.T) {
	for _, c := range []struct{ dk, bytes int }{{20, 4 * (224*32 + 10496)}, {128, 156672}, {190, 214016}, {192, 214016}} {
		if got := deltaNetStateTiledShared(c.dk); got != c.bytes {
			t.Errorf("dk %d: %d bytes, want %d", c.dk, got, c.bytes)
		}
	}
	if deltaNetStateTiledShared(deltaNetChunkMaxKeyDim) > deltaNetStateTiledMaxShared {
		t.Errorf("dk %d needs %d bytes, past sm_90's %d", deltaNetChunkMaxKeyDim, deltaNetStateTiledShared(deltaNetChunkMaxKeyDim), deltaNetStateTiledMaxShared)
	}
	for s, want := range map[string]bool{"": deltaNetStateTiledDefault, "tiled": true, "simt": false} {
		if got, err := parseDeltaNetState(s); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := parseDeltaNetState("1"); err == nil {
		t.Error(`"1" accepted`)
	}
}

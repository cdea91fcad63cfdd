package cuda

import "testing"

// TestCodecHaloRows checks the rule at the S2 codec's convolutions (the
// decoder's residual units of 96, 192, 384 and 768 channels at a 32-frame
// chunk's rows, dilation 9: the widest reach) and its edges.
func TestCodecHaloRows(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		rows, cpad, taps, dil, force int
		want                         int
	}{
		{"96 channels, 65536 rows", 65536, 96, 7, 9, 0, 256},
		{"192 channels, 32768 rows", 32768, 192, 7, 9, 0, 128},
		{"384 channels, 8192 rows", 8192, 384, 7, 9, 0, 64},
		{"768 channels, 1024 rows: no block fits twice an SM", 1024, 768, 7, 9, 0, 0},
		{"one tap", 65536, 96, 1, 1, 0, 0},
		{"few rows", 1023, 96, 7, 9, 0, 0},
		{"forced 128 at 384 channels (one block an SM)", 8192, 384, 7, 9, 128, 128},
		{"forced 256 at 768 channels: beyond an SM", 1024, 768, 7, 9, 256, 0},
		{"forced below the fewest rows", 100, 96, 7, 1, 64, 64},
		{"never", 65536, 96, 7, 9, codecHaloNever, 0},
	} {
		if got := codecHaloRows(tc.rows, tc.cpad, tc.taps, tc.dil, tc.force); got != tc.want {
			t.Errorf("%s: %d rows a block, want %d", tc.name, got, tc.want)
		}
	}
	// The shared memory: held rows at cpad+8 halves, three W stages of 64 × 32.
	if got, want := codecHaloShared(128, 192, 7, 9), (128+54)*200*2+3*64*32*2; got != want {
		t.Errorf("codecHaloShared(128, 192, 7, 9) = %d, want %d", got, want)
	}
}

func TestCodecHaloForce(t *testing.T) {
	for v, want := range map[string]int{"": 0, "auto": 0, "0": codecHaloNever, "64": 64, "128": 128, "256": 256} {
		t.Setenv(CodecHaloEnv, v)
		if got, err := codecHaloForce(); err != nil || got != want {
			t.Errorf("%s=%q: %d, %v; want %d", CodecHaloEnv, v, got, err, want)
		}
	}
	for _, v := range []string{"32", "yes", "-1"} {
		t.Setenv(CodecHaloEnv, v)
		if _, err := codecHaloForce(); err == nil {
			t.Errorf("%s=%q accepted", CodecHaloEnv, v)
		}
	}
}

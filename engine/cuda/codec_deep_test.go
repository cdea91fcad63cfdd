package cuda

import "testing"

func TestCodecDeepRing(t *testing.T) {
	for _, tc := range []struct {
		rows int
		on   bool
		want bool
	}{{1, true, true}, {128, true, true}, {129, true, false}, {32, false, false}} {
		if got := codecDeepRing(tc.rows, tc.on); got != tc.want {
			t.Errorf("codecDeepRing(%d, %v) = %v, want %v", tc.rows, tc.on, got, tc.want)
		}
	}
	// Eight stages of a 128 × 32 A tile and a 64 × 32 W tile, FP16: 96 KB.
	if codecDeepShared != 96<<10 {
		t.Errorf("codecDeepShared = %d, want %d", codecDeepShared, 96<<10)
	}
	for v, want := range map[string]bool{"": true, "1": true, "0": false} {
		t.Setenv(CodecDeepEnv, v)
		if got, err := codecDeepOn(); err != nil || got != want {
			t.Errorf("%s=%q: %v, %v; want %v", CodecDeepEnv, v, got, err, want)
		}
	}
	t.Setenv(CodecDeepEnv, "yes")
	if _, err := codecDeepOn(); err == nil {
		t.Errorf("%s=yes accepted", CodecDeepEnv)
	}
}

package playback

import "testing"

func TestRebufferSamples(t *testing.T) {
	const spf, audio = 2048, 44100.0 / 2048
	tests := []struct {
		name            string
		rate            float64
		remaining, next int
		want            int
	}{
		{"no measurement: one chunk", 0, 100, 4, 4 * spf},
		{"twice real time: half of the next chunk", 2 * audio, 100, 4, 2 * spf},
		{"half real time: the rest's shortfall", audio / 2, 100, 4, 100 * spf},
		{"half real time near the end: the next chunk", audio / 2, 3, 4, 8 * spf},
	}
	for _, tc := range tests {
		if got := RebufferSamples(tc.rate, audio, tc.remaining, tc.next, spf); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

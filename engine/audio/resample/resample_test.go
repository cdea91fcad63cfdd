package resample

import (
	"fmt"
	"math"
	"testing"
)

func tone(rate, n int, hz float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(0.5 * math.Sin(2*math.Pi*hz*float64(i)/float64(rate)))
	}
	return out
}

// A tone streamed through in uneven chunks comes out as the same tone at the
// new rate, aligned and of the right length, and a tone above the new
// Nyquist frequency is removed (the filter is band-limited).
func TestResample(t *testing.T) {
	for _, c := range []struct{ from, to int }{{44100, 24000}, {44100, 16000}, {44100, 48000}, {44100, 22050}} {
		t.Run(fmt.Sprintf("%d-%d", c.from, c.to), func(t *testing.T) {
			n := c.from + 777
			tones := []float64{440, 3000}
			if c.to < c.from { // a tone between the new and the old Nyquist frequency
				tones = append(tones, 0.6*float64(c.to))
			}
			for _, hz := range tones {
				r, err := New(c.from, c.to)
				if err != nil {
					t.Fatal(err)
				}
				in := tone(c.from, n, hz)
				var out []float32
				for i, step := 0, 1; i < n; i, step = i+step, step*2+1 {
					got, err := r.Process(in[i:min(n, i+step)])
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, got...)
				}
				tail, err := r.Flush()
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, tail...)
				r.Close()
				want := int(math.Round(float64(n) * float64(c.to) / float64(c.from)))
				if len(out) != want {
					t.Fatalf("%v Hz: %d samples, want %d", hz, len(out), want)
				}
				ref := tone(c.to, want, hz)
				var s, e float64
				for i := want / 10; i < want*9/10; i++ { // away from the edges
					if hz > float64(c.to)/2 {
						ref[i] = 0 // above Nyquist: must be filtered out
					}
					s += 0.125
					e += float64(out[i]-ref[i]) * float64(out[i]-ref[i])
				}
				if snr := 10 * math.Log10(s/e); snr < 80 {
					t.Errorf("%v Hz: %.1f dB from the ideal, want ≥ 80", hz, snr)
				}
			}
		})
	}
}

func TestBadRates(t *testing.T) {
	if _, err := New(0, 16000); err == nil {
		t.Fatal("rate 0 accepted")
	}
}

package resample

import "testing"

// BenchmarkResample: 10 s at 44.1 kHz to each API rate in 8192-sample
// chunks; ms-per-audio-s is milliseconds of one core per second of audio.
func BenchmarkResample(b *testing.B) {
	const from, seconds, chunk = 44100, 10, 8192
	in := tone(from, from*seconds, 440)
	for _, to := range []int{48000, 24000, 22050, 16000} {
		b.Run(itoa(to), func(b *testing.B) {
			for b.Loop() {
				r, err := New(from, to)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < len(in); i += chunk {
					if _, err := r.Process(in[i:min(len(in), i+chunk)]); err != nil {
						b.Fatal(err)
					}
				}
				r.Flush()
				r.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N)/seconds, "ms-per-audio-s")
		})
	}
}

func itoa(n int) string {
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

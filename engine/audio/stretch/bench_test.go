package stretch

import (
	"fmt"
	"math"
	"testing"
)

// BenchmarkStretch: 10 s at 44.1 kHz in 8192-sample chunks at several
// speeds; ms-per-audio-s is milliseconds of one core per second of input.
func BenchmarkStretch(b *testing.B) {
	const rate, seconds, chunk = 44100, 10, 8192
	in := make([]float32, rate*seconds)
	for i := range in {
		in[i] = float32(0.3 * math.Sin(2*math.Pi*140*float64(i)/rate))
	}
	for _, speed := range []float64{0.5, 1.5, 2} {
		b.Run(fmt.Sprint(speed), func(b *testing.B) {
			for b.Loop() {
				st, err := New(rate, speed)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < len(in); i += chunk {
					if _, err := st.Process(in[i:min(len(in), i+chunk)]); err != nil {
						b.Fatal(err)
					}
				}
				st.Flush()
				st.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N)/seconds, "ms-per-audio-s")
		})
	}
}

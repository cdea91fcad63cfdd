package stretch

import (
	"fmt"
	"math"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStretch: 10 s at 44.1 kHz in 8192-sample chunks at several
// speeds; cpu-ms-per-audio-s is CPU milliseconds per second of input.
func BenchmarkStretch(b *testing.B) {
	const rate, seconds, chunk = 44100, 10, 8192
	in := make([]float32, rate*seconds)
	for i := range in {
		in[i] = float32(0.3 * math.Sin(2*math.Pi*140*float64(i)/rate))
	}
	for _, speed := range []float64{0.25, 0.5, 1.5, 2, 4} {
		b.Run(fmt.Sprint(speed), func(b *testing.B) {
			cpu0 := cpuTime()
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
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N)/seconds, "cpu-ms-per-audio-s")
		})
	}
}

// cpuTime is the process's CPU time (all threads): on a shared machine it
// varies far less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

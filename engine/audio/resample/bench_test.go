package resample

import (
	"syscall"
	"testing"
	"time"
)

// BenchmarkResample: 10 s at 44.1 kHz to each API rate in 8192-sample
// chunks; cpu-ms-per-audio-s is CPU milliseconds per second of audio.
func BenchmarkResample(b *testing.B) {
	const from, seconds, chunk = 44100, 10, 8192
	in := tone(from, from*seconds, 440)
	for _, to := range []int{48000, 24000, 22050, 16000} {
		b.Run(itoa(to), func(b *testing.B) {
			cpu0 := cpuTime()
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
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N)/seconds, "cpu-ms-per-audio-s")
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

// cpuTime is the process's CPU time (all threads): on a shared machine it
// varies far less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

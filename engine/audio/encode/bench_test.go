package encode

import (
	"io"
	"syscall"
	"testing"
	"time"
)

// BenchmarkEncode: the cost of each format as a streamed reply pays it —
// 10 s of speech-like audio at 44.1 kHz in the engine's chunks (4 frames of
// 2048 samples). The figure is cpu-ms-per-audio-s: CPU milliseconds per
// second of audio (docs/PERF.md).
func BenchmarkEncode(b *testing.B) {
	const rate, seconds, chunk = 44100, 10, 4 * 2048
	in := speechLike(rate, rate*seconds)
	for _, f := range Formats() {
		b.Run(string(f), func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				e, err := New(io.Discard, f, rate)
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < len(in); i += chunk {
					if err := e.Write(in[i:min(len(in), i+chunk)]); err != nil {
						b.Fatal(err)
					}
				}
				if err := e.Close(); err != nil {
					b.Fatal(err)
				}
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

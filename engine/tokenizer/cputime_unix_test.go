//go:build unix

package tokenizer

import "syscall"

// processCPUSeconds is the user+system CPU time of this process so far.
// Benchmarks report throughput per CPU second next to the wall-clock
// figure: the shared 2-core dev machine is often oversubscribed, which
// inflates wall time but not CPU time.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

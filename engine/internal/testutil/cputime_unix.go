//go:build unix

package testutil

import "syscall"

// ProcessCPUSeconds is the user+system CPU time of this process so far, or
// −1 where it cannot be read. Benchmarks report figures per CPU second next
// to the wall-clock ones: the shared 2-core dev machine is often
// oversubscribed, which inflates wall time but not CPU time.
func ProcessCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

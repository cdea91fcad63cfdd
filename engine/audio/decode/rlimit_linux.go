package decode

import (
	"fmt"
	"os"
	"syscall"
)

// limitAddressSpace sets RLIMIT_AS of this process to what it has mapped
// now plus extra bytes: a decoder that asks for more gets an allocation
// failure (the libraries) or an out-of-memory exit (Go). Relative, because
// what the binary maps before decoding (the Go runtime's reservations, the
// shared libraries: 1.5 GB for the test binary, more for the studio's) is
// not the decoder's and varies with the program.
func limitAddressSpace(extra uint64) error {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return fmt.Errorf("reading the address space's size: %w", err)
	}
	var pages uint64
	if _, err := fmt.Sscan(string(b), &pages); err != nil {
		return fmt.Errorf("reading the address space's size: %w", err)
	}
	limit := pages*uint64(os.Getpagesize()) + extra
	return syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
}

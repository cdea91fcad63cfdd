//go:build !linux

package decode

// limitAddressSpace is a no-op where RLIMIT_AS is not available: the child
// keeps its wall-clock limit and its crashes stay its own.
func limitAddressSpace(extra uint64) error { return nil }

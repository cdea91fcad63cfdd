//go:build !linux

package gpuworker

import "os"

// ProtocolOutput is stdout where descriptors cannot be moved portably; the
// worker's own code never prints to stdout.
func ProtocolOutput() (*os.File, error) { return os.Stdout, nil }

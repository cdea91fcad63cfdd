//go:build cuda

package main

import (
	"os"
	"syscall"
)

// protocolOutput duplicates stdout for the protocol and points descriptor 1
// at stderr.
func protocolOutput() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, err
	}
	if err := syscall.Dup3(2, 1, 0); err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "protocol"), nil
}

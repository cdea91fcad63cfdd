package gpuworker

import (
	"os"
	"syscall"
)

// ProtocolOutput gives the protocol its own copy of stdout and points file
// descriptor 1 at stderr: a library (C code above all) that prints to
// stdout would otherwise corrupt the frames. A worker calls it first and
// serves on the file it returns.
func ProtocolOutput() (*os.File, error) {
	fd, err := syscall.Dup(1)
	if err != nil {
		return nil, err
	}
	if err := syscall.Dup3(2, 1, 0); err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), "protocol"), nil
}

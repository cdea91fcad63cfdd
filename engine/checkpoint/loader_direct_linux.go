//go:build linux

package checkpoint

import (
	"io"
	"os"
	"syscall"
)

// directFile reads with single pread calls: os.File.ReadAt would retry a
// short read at an unaligned offset, which O_DIRECT refuses.
type directFile struct{ f *os.File }

func openDirectFile(path string) (loadFile, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		return nil, err
	}
	return directFile{f}, nil
}

func (d directFile) ReadAt(p []byte, off int64) (int, error) {
	for {
		n, err := syscall.Pread(int(d.f.Fd()), p, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "pread", Path: d.f.Name(), Err: err}
		}
		if n == 0 && len(p) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (d directFile) Close() error { return d.f.Close() }

// Package regular opens and reads files a user or a download put in place
// (checkpoint directories, the Hugging Face cache) as regular files only. A
// FIFO would block an open or a read forever, a device such as /dev/zero
// never ends, and a huge file exhausts memory when read whole; these are
// refused by name before any byte is read. A symlink is followed: one that
// resolves to a regular file is that file.
//
// Errors name the path and what is wrong with it, never the file's bytes.
package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Open opens path for reading when it is a regular file (after symlinks).
// The check comes before the open, so a FIFO never blocks it, and again on
// the open file, so a file swapped in between is refused too; O_NONBLOCK
// keeps that open from waiting for a writer.
func Open(path string) (*os.File, fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if err := check(path, st); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err = f.Stat()
	if err == nil {
		err = check(path, st)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// ReadFile reads the whole regular file at path, refusing one larger than
// limit bytes before reading it (and one that grows past limit while read).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, tooLarge(path, st.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(b)) > limit { // it grew while read
		return nil, tooLarge(path, int64(len(b)), limit)
	}
	return b, nil
}

// Is reports whether path is a regular file (after symlinks), without
// opening it.
func Is(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

func check(path string, st fs.FileInfo) error {
	if st.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(st.Mode()))
}

// ErrNotRegular marks a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}

func tooLarge(path string, size, limit int64) error {
	return fmt.Errorf("%s: %w: %d bytes, the limit is %d", path, ErrTooLarge, size, limit)
}

// ErrTooLarge marks a file over its reader's size limit.
var ErrTooLarge = errors.New("file too large")

// Package files is how the studio's packages write and read their own files
// (settings, takes, exports): atomic replacement, the removal of what a
// killed save left behind, reads capped at a size, and strict JSON decoding.
// It knows no file format of its own and imports no app package.
package files

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"proscenium/internal/jsonerr"
	"proscenium/internal/regular"
)

// StaleAfter is how long a temporary file must have been left untouched
// before it counts as the leftover of a save that was killed (and not the
// save in progress of another studio sharing the directory).
const StaleAfter = 10 * time.Minute

// WriteAtomic writes path through a temporary file in the same directory
// ("."+base+".*"), synced, then renamed over the old one.
func WriteAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// RemoveStale removes the regular files in dir whose names start with
// prefix and pass match when given (one of our temporary names) and that
// were left untouched for StaleAfter; it reports what it could not remove.
func RemoveStale(dir, prefix string, now time.Time, match func(name string) bool) (problems []string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() || (match != nil && !match(e.Name())) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if fi, err := e.Info(); err != nil || now.Sub(fi.ModTime()) < StaleAfter {
			continue
		}
		if err := os.Remove(p); err != nil {
			problems = append(problems, fmt.Sprintf("could not remove %s, left by an interrupted save: %v", p, err))
		}
	}
	return problems
}

// ReadCapped reads a regular file of at most limit bytes: a longer file, a
// FIFO (which would block the read forever) or a device is refused by name
// (internal/regular).
func ReadCapped(path string, limit int64) ([]byte, error) {
	return regular.ReadFile(path, limit)
}

// DecodeStrict decodes exactly one JSON value and refuses unknown fields;
// its errors are jsonerr.Phrase's.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonerr.Phrase(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

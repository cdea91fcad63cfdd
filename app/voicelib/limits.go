package voicelib

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultMaxBytes is the library's size limit unless the settings say
// otherwise: 1 GiB, some sixty recordings at the upload limit.
const DefaultMaxBytes = 1 << 30

// ErrFull is returned (wrapped) by Add when the recording would take the
// library past its byte limit.
var ErrFull = errors.New("the voice library is full")

// Bytes is the size of every file in the library.
func (l *Library) Bytes() (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.bytes()
}

func (l *Library) bytes() (int64, error) {
	var n int64
	err := filepath.WalkDir(l.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("voice library: %w", err)
	}
	return n, nil
}

// checkRoom refuses an entry of about size bytes that would take the
// library past MaxBytes (0: DefaultMaxBytes). Called with l.mu held.
func (l *Library) checkRoom(size int64) error {
	limit := l.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	used, err := l.bytes()
	if err != nil {
		return err
	}
	if used+size > limit {
		return fmt.Errorf("%w: it holds %.1f MB and this recording needs %.1f MB more, past its limit of %.1f MB (the voice_library_max_bytes setting): delete voices you no longer use, or raise the limit",
			ErrFull, float64(used)/1e6, float64(size)/1e6, float64(limit)/1e6)
	}
	return nil
}

// Sweep removes what no voice uses: every entry whose id keep does not
// hold, and what an interrupted write left (folders without a manifest,
// temporary files, anything that is not an entry's folder). It returns the
// ids and names it removed. The studio sweeps at start, with the ids its
// voices name.
func (l *Library) Sweep(keep map[string]bool) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("voice library: %w", err)
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		dir := filepath.Join(l.dir, name)
		if idPattern.MatchString(name) && e.IsDir() && keep[name] {
			if _, err := os.Stat(filepath.Join(dir, "voice.json")); err == nil {
				removeTemporaries(dir)
				continue
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			return removed, fmt.Errorf("voice library: removing %s: %w", name, err)
		}
		removed = append(removed, name)
	}
	return removed, nil
}

// removeTemporaries deletes the *.tmp files a write left in an entry.
func removeTemporaries(dir string) {
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".tmp") || strings.Contains(f.Name(), ".tmp-") {
			os.Remove(filepath.Join(dir, f.Name()))
		}
	}
}

package settings

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"proscenium/app/internal/files"
)

// Store holds the current settings and writes every change to its file.
// It is safe for concurrent use.
type Store struct {
	path string // "" keeps the settings in memory only

	mu  sync.Mutex
	cur Settings
	bad bool // the file did not load: keep it aside before replacing it
}

// Open reads the settings file at path ("" keeps settings in memory). A
// file that does not load gives the defaults and a warning (the studio's
// status line shows it): it never stops the studio. Leftovers of a save
// that was killed are removed first.
func Open(path string) (st *Store, warnings []string) {
	st = &Store{path: path, cur: Default()}
	if path == "" {
		return st, nil
	}
	// What a save killed midway left (files.WriteAtomic's temporary name).
	warnings = files.RemoveStale(filepath.Dir(path), "."+filepath.Base(path)+".", time.Now(), nil)
	loaded, err := Load(path)
	if err != nil {
		st.bad = true
		warnings = append(warnings, fmt.Sprintf("%v: using the default settings (the file is kept as %s.bad-<time> when a setting is next saved)", err, path))
	} else {
		st.cur = loaded
	}
	return st, warnings
}

// FromFile reports whether the settings came from a file that loaded (not
// the defaults of a first run, of a file that did not load, or of a store
// in memory): what the voices' library sweep trusts.
func (s *Store) FromFile() bool {
	if s.path == "" {
		return false
	}
	s.mu.Lock()
	bad := s.bad
	s.mu.Unlock()
	_, err := os.Stat(s.path)
	return !bad && err == nil
}

// Get returns a copy of the current settings.
func (s *Store) Get() Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur.Clone()
}

// Update validates st and makes it the current settings, writing the file.
// check, when given, sees the old and the new settings under the store's
// lock and may refuse the change (its error is returned as it is). Invalid
// settings, a refusal or a failed write change nothing; the error says why.
func (s *Store) Update(st Settings, check func(old, new Settings) error) (Settings, error) {
	if err := st.Validate(); err != nil {
		return s.Get(), err
	}
	st = st.Clone()
	s.mu.Lock()
	defer s.mu.Unlock()
	if check != nil {
		if err := check(s.cur, st); err != nil {
			return s.cur.Clone(), err
		}
	}
	if s.path != "" && !reflect.DeepEqual(st, s.cur) {
		if s.bad {
			// Keep the file that did not load for the user to look at.
			if err := keepAside(s.path, time.Now()); err != nil && !os.IsNotExist(err) {
				return s.cur.Clone(), fmt.Errorf("keeping the unreadable settings file aside: %w", err)
			}
			s.bad = false
		}
		if err := Save(s.path, st); err != nil {
			return s.cur.Clone(), fmt.Errorf("saving settings: %w", err)
		}
	}
	s.cur = st
	return st.Clone(), nil
}

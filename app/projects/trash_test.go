package projects

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project goes to the trash as the freedesktop.org specification lays it
// out: its folder under files/, an info file saying where it was (the path
// URL-escaped) and when; a second of the same name is "<name>.2".
func TestTrashMovesAProjectIntoTheDesktopsTrash(t *testing.T) {
	s := newTestStore(t)
	trash := filepath.Join(t.TempDir(), "Trash")
	for range 2 {
		if _, err := s.Create(sample("Act one")); err != nil {
			t.Fatal(err)
		}
		if s.Current() != "Act one" {
			t.Fatalf("current %q", s.Current())
		}
		if _, err := s.Trash("Act one", trash); err != nil {
			t.Fatal(err)
		}
	}
	for i, as := range []string{"Act one", "Act one.2"} {
		if _, err := os.Stat(filepath.Join(trash, "files", as, projectFile)); err != nil {
			t.Errorf("trashed project %d: %v", i+1, err)
		}
		info, err := os.ReadFile(filepath.Join(trash, "info", as+".trashinfo"))
		abs, _ := filepath.Abs(filepath.Join(s.Dir(), "Act one"))
		want := "[Trash Info]\nPath=" + strings.ReplaceAll(abs, " ", "%20") + "\nDeletionDate=2026-12-01T15:00:0"
		if err != nil || !strings.HasPrefix(string(info), want) {
			t.Errorf("info %d: %q (%v), want it to start %q", i+1, info, err, want)
		}
	}
	if l, _ := s.List(); len(l) != 0 || s.Current() != "" {
		t.Errorf("after the trash: %v, current %q", l, s.Current())
	}
	// A project put back by the file manager is a project again.
	if err := os.Rename(filepath.Join(trash, "files", "Act one"), filepath.Join(s.Dir(), "Act one")); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Open("Act one"); err != nil || p.Script != sample("").Script {
		t.Errorf("restored: %+v, %v", p, err)
	}
}

func TestTrashRefusesAndChangesNothing(t *testing.T) {
	s := newTestStore(t)
	if _, err := s.Trash("Nothing", t.TempDir()); !errors.Is(err, ErrNotFound) {
		t.Errorf("a project that is not there: %v", err)
	}
	if _, err := s.Trash("../x", t.TempDir()); !errors.Is(err, ErrInvalid) {
		t.Errorf("a name with a slash: %v", err)
	}
	if _, err := s.Create(sample("Kept")); err != nil {
		t.Fatal(err)
	}
	// A trash that cannot be made (a file where its folder would be: root too is refused).
	blocked := filepath.Join(t.TempDir(), "a file")
	if err := os.WriteFile(blocked, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Trash("Kept", filepath.Join(blocked, "Trash")); err == nil || !strings.Contains(err.Error(), "is where it was") {
		t.Errorf("a trash that cannot be made: %v", err)
	}
	if _, err := s.Open("Kept"); err != nil {
		t.Errorf("the project after a refused trash: %v", err)
	}
}

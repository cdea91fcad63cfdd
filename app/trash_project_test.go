package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/app/studio"
)

// Deleting a project moves it into the trash the service was given, says
// where, and leaves the other projects; one not there is refused.
func TestTrashProject(t *testing.T) {
	hub := studio.NewHub()
	notices := noticeLog(hub)
	trash := filepath.Join(t.TempDir(), "Trash")
	svc, err := New(Config{Events: hub, ProjectsDir: t.TempDir(), TrashDir: trash})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(svc) })
	for _, n := range []string{"Keep", "Drop"} {
		if _, err := svc.CreateProject(n); err != nil {
			t.Fatal(err)
		}
	}
	got, err := svc.TrashProject("Drop")
	if err != nil || got.Path != filepath.Join(trash, "files", "Drop") {
		t.Fatalf("trashed: %+v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(trash, "info", "Drop.trashinfo")); err != nil {
		t.Error(err)
	}
	if list, _ := svc.Projects(); len(list) != 1 || list[0].Name != "Keep" {
		t.Errorf("projects left: %+v", list)
	}
	if last := notices.last(); !strings.Contains(last, "moved the project Drop to the trash ("+got.Path+")") {
		t.Errorf("notice: %q", last)
	}
	if _, err := svc.TrashProject("Drop"); !errors.Is(err, studio.ErrNotFound) {
		t.Errorf("trashed twice: %v", err)
	}
}

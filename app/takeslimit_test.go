package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"proscenium/app/internal/enginetest"
	"proscenium/app/projects"
	"proscenium/app/settings"
	"proscenium/app/takes"
	"proscenium/engine/api"
)

// Item 5: lowering the takes limit never removes takes by itself. The
// service says which would go; only a confirmation naming exactly those
// removes them, at once and with a notice.
func TestLoweringTheTakesLimitAsksFirst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "settings.json")
	svc, err := New(Config{Open: func(string) (api.Engine, error) { return &enginetest.PCM{Frames: 40}, nil }, TakesDir: dir, SettingsPath: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(svc) })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		speakAndWait(t, svc, speech("Keep me.")) // 40 frames: 327,680 bytes of audio each
	}
	lower := svc.Settings()
	lower.TakesLimitBytes = 1 << 20 // three of them fit

	_, err = svc.SetSettings(lower)
	if !errors.Is(err, takes.ErrConfirm) || !strings.Contains(err.Error(), "#1") {
		t.Fatalf("a lower limit through SetSettings: %v, want ErrConfirm naming take #1", err)
	}
	if len(svc.Takes()) != 4 || svc.Settings().TakesLimitBytes != settings.DefaultTakesLimit {
		t.Fatal("the refused change changed something")
	}
	effect, err := svc.TakesLimitEffect(lower.TakesLimitBytes)
	if err != nil || len(effect.Remove) != 1 || effect.Remove[0].ID != 1 || effect.Bytes != effect.Remove[0].Bytes || effect.Bytes < 327680 {
		t.Fatalf("effect: %+v %v", effect, err)
	}
	if len(svc.Takes()) != 4 {
		t.Fatal("asking removed takes")
	}
	// A confirmation of other takes than those that would go changes nothing.
	if _, err := svc.ApplyTakesLimit(takes.TakesLimitChange{Limit: lower.TakesLimitBytes, Remove: []int{2}}); !errors.Is(err, takes.ErrConfirm) {
		t.Fatalf("a wrong confirmation: %v", err)
	}
	if _, err := svc.ApplyTakesLimit(takes.TakesLimitChange{Limit: lower.TakesLimitBytes}); !errors.Is(err, takes.ErrConfirm) {
		t.Fatalf("a confirmation of nothing: %v", err)
	}
	if len(svc.Takes()) != 4 {
		t.Fatal("a refused confirmation removed takes")
	}
	st, err := svc.ApplyTakesLimit(takes.TakesLimitChange{Limit: lower.TakesLimitBytes, Remove: []int{1}})
	if err != nil || st.TakesLimitBytes != 1<<20 {
		t.Fatalf("confirmed: %+v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "1")); !os.IsNotExist(err) || len(svc.Takes()) != 3 {
		t.Fatalf("take #1 after the confirmed limit: %v, %d takes", err, len(svc.Takes()))
	}
	if onDisk, err := settings.Load(path); err != nil || onDisk.TakesLimitBytes != 1<<20 {
		t.Fatalf("settings file: %+v %v", onDisk, err)
	}
	// Raising it, or lowering it where nothing has to go, needs no confirmation.
	lower.TakesLimitBytes = 4 << 20
	if _, err := svc.SetSettings(lower); err != nil {
		t.Fatal(err)
	}
	lower.TakesLimitBytes = 2 << 20
	if _, err := svc.SetSettings(lower); err != nil {
		t.Fatal(err)
	}
}

// A take a project has chosen for a line is never removed to make room:
// the oldest unchosen take goes instead, and when only chosen takes are
// left the new take is kept for the session, unsaved.
func TestChosenTakesAreNeverEvicted(t *testing.T) {
	dir := t.TempDir()
	svc, err := New(Config{Open: func(string) (api.Engine, error) { return &enginetest.PCM{Frames: 40}, nil }, TakesDir: dir,
		SettingsPath: filepath.Join(t.TempDir(), "settings.json"), ProjectsDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Shutdown(svc) })
	if _, err := svc.LoadModel(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	st := svc.Settings()
	st.TakesLimitBytes = 1 << 20 // three takes of 40 frames fit
	if _, err := svc.SetSettings(st); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		speakAndWait(t, svc, speech("Line."))
	}
	p, err := svc.CreateProject("Scene")
	if err != nil {
		t.Fatal(err)
	}
	p.Lines = []projects.Line{{Text: "Line.", Takes: []int{1, 2}, Chosen: 1}, {Text: "Two.", Takes: []int{3}, Chosen: 3}}
	p.Takes = []int{1, 2, 3}
	if _, err := svc.SaveProject(p); err != nil {
		t.Fatal(err)
	}
	speakAndWait(t, svc, speech("Line.")) // #4: #2, the oldest unchosen, goes
	for id, want := range map[int]bool{1: true, 2: false, 3: true, 4: true} {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprint(id))); (err == nil) != want {
			t.Errorf("take #%d on disk: %v, want %v", id, err == nil, want)
		}
	}
	p.Lines[1].Takes, p.Lines[1].Chosen, p.Takes = []int{3, 4}, 4, []int{1, 3, 4}
	p.Lines = append(p.Lines, projects.Line{Text: "Three.", Takes: []int{3}, Chosen: 3})
	p.Lines[1].Takes = []int{4}
	if _, err := svc.SaveProject(p); err != nil {
		t.Fatal(err)
	}
	speakAndWait(t, svc, speech("Line.")) // #5: no room but chosen takes
	if _, err := os.Stat(filepath.Join(dir, "5")); !os.IsNotExist(err) {
		t.Errorf("take #5 was saved over chosen takes: %v", err)
	}
	for _, id := range []int{1, 3, 4} {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprint(id))); err != nil {
			t.Errorf("chosen take #%d was removed: %v", id, err)
		}
	}
}

package projects

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"proscenium/engine/api"
)

func newTestStore(t *testing.T) *Store {
	s := NewStore(t.TempDir())
	tick := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	s.now = func() time.Time { tick = tick.Add(time.Second); return tick }
	return s
}

func sample(name string) Project {
	p := New(name, api.DefaultSampling(), 7, 400)
	p.Script = "<|speaker:0|>Hello.\n\n<|speaker:1|>Hi there."
	p.Cast = []string{"Ada", ""}
	p.Characters = []string{"Anna", "Dr. Ben Okafor"}
	p.Lines = []Line{
		{Text: "<|speaker:0|>Hello.", Speaker: 0, Takes: []int{3, 5}, Chosen: 5},
		{Text: "<|speaker:1|>Hi there.", Speaker: 1, Takes: []int{4}},
	}
	p.Takes = []int{3, 4, 5}
	return p
}

func TestSaveOpenListRoundTrip(t *testing.T) {
	s := newTestStore(t)
	if l, err := s.List(); err != nil || len(l) != 0 {
		t.Fatalf("empty store lists %v, %v", l, err)
	}
	saved, err := s.Save(sample("Act one"))
	if err != nil || saved.KeptAside != "" {
		t.Fatal(saved, err)
	}
	if _, err := s.Save(sample("Act two")); err != nil {
		t.Fatal(err)
	}
	got, err := s.Open("Act one")
	if err != nil {
		t.Fatal(err)
	}
	want := sample("Act one")
	want.SavedMs = saved.Project.SavedMs
	if got.Script != want.Script || got.Lines[0].Chosen != 5 || got.Cast[0] != "Ada" || got.Seed != 7 || got.Export != DefaultExport() || got.SavedMs == 0 {
		t.Errorf("opened %+v", got)
	}
	if c := s.Chosen(); len(c) != 1 || !c[5] {
		t.Errorf("chosen takes %v, want #5", c)
	}
	if s.Current() != "Act one" {
		t.Errorf("current %q", s.Current())
	}
	list, err := s.List()
	if err != nil || len(list) != 2 || list[0].Name != "Act two" || list[1].Lines != 2 || list[1].Takes != 3 {
		t.Errorf("list %+v, %v", list, err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir(), "Act one", "project.json")); err != nil {
		t.Error(err)
	}
}

// A project.json that cannot be read is renamed aside, reported and never
// overwritten: not by Open, not by a Save over it.
func TestCorruptFileIsKeptAside(t *testing.T) {
	s := newTestStore(t)
	if _, err := s.Save(sample("Scene")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), "Scene", "project.json")
	broken := []byte(`{"format": 1, "name": "Scene", "script": "half a fi`)
	if err := os.WriteFile(path, broken, 0o644); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List()
	if len(list) != 1 || list[0].Problem == "" {
		t.Errorf("list does not report the broken project: %+v", list)
	}
	_, err := s.Open("Scene")
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "kept as") {
		t.Fatalf("open: %v", err)
	}
	if kept, _ := os.ReadFile(ce.KeptAs); string(kept) != string(broken) {
		t.Errorf("kept copy holds %q", kept)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the broken file is still in place: %v", err)
	}
	// Broken again, then saved over: kept aside first.
	if err := os.WriteFile(path, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved, err := s.Save(sample("Scene"))
	if err != nil || saved.KeptAside == "" || saved.KeptAside == ce.KeptAs {
		t.Fatalf("save over a broken file: %+v, %v", saved, err)
	}
	if kept, _ := os.ReadFile(saved.KeptAside); string(kept) != "not json" {
		t.Errorf("second kept copy holds %q", kept)
	}
	if _, err := s.Open("Scene"); err != nil {
		t.Errorf("the saved project does not open: %v", err)
	}
}

// TestReadChangesNothing: Read gives the project as saved without making
// it the current one, and reports a broken file without moving it.
func TestReadChangesNothing(t *testing.T) {
	s := newTestStore(t)
	for _, name := range []string{"One", "Two"} {
		if _, err := s.Save(sample(name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Open("One"); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Read("Two"); err != nil || p.Name != "Two" {
		t.Fatalf("Read = %v, %v", p.Name, err)
	}
	if cur := s.Current(); cur != "One" {
		t.Errorf("after Read the current project is %q, want One", cur)
	}
	if _, err := s.Read("Three"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read of a missing project: %v", err)
	}
	path := filepath.Join(s.Dir(), "Two", "project.json")
	if err := os.WriteFile(path, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := s.Read("Two")
	var ce *CorruptError
	if !errors.Is(err, ErrInvalid) || errors.As(err, &ce) || !strings.Contains(err.Error(), `project "Two"`) {
		t.Errorf("Read of a broken project: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "not json" {
		t.Errorf("Read moved the broken file: %q", data)
	}
}

// A project file that is a FIFO is refused by name as invalid, in the list
// and on open, without waiting for a writer.
func TestProjectFileFIFORefused(t *testing.T) {
	s := newTestStore(t)
	if _, err := s.Save(sample("Scene")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Dir(), "Scene", "project.json")
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan error, 1)
	go func() {
		if list, _ := s.List(); len(list) != 1 || !strings.Contains(list[0].Problem, "not a regular file") {
			t.Errorf("list: %+v", list)
		}
		_, err := s.Open("Scene")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), path+": not a regular file (a named pipe)") {
			t.Errorf("open: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("no answer after a minute: opening the FIFO blocks")
	}
}

func TestRenameAndDuplicate(t *testing.T) {
	s := newTestStore(t)
	for _, n := range []string{"A", "B"} {
		if _, err := s.Save(sample(n)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Rename("A", "B"); !errors.Is(err, ErrExists) {
		t.Errorf("rename onto an existing project: %v", err)
	}
	if _, err := s.Rename("Nope", "C"); !errors.Is(err, ErrNotFound) {
		t.Errorf("rename of a missing project: %v", err)
	}
	p, err := s.Rename("A", "A2")
	if err != nil || p.Name != "A2" {
		t.Fatal(p.Name, err)
	}
	if _, err := s.Open("A"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the old name still opens: %v", err)
	}
	if got, err := s.Open("A2"); err != nil || got.Name != "A2" || got.Lines[0].Chosen != 5 {
		t.Errorf("renamed project: %+v, %v", got, err)
	}
	d, err := s.Duplicate("A2", "A3")
	if err != nil || d.Name != "A3" || len(d.Takes) != 3 {
		t.Fatal(d, err)
	}
	if _, err := s.Duplicate("A2", "B"); !errors.Is(err, ErrExists) {
		t.Errorf("duplicate onto an existing project: %v", err)
	}
	if _, err := s.Create(New("A2", api.DefaultSampling(), 0, 0)); !errors.Is(err, ErrExists) {
		t.Errorf("create over an existing project: %v", err)
	}
}

func TestRefusals(t *testing.T) {
	for _, name := range []string{"", " x", "a/b", `a\b`, ".hidden", "..", "tab\there", strings.Repeat("x", 81)} {
		if err := CheckName(name); !errors.Is(err, ErrInvalid) {
			t.Errorf("name %q accepted", name)
		}
	}
	for _, name := range []string{"Act 1", "Scène — deux", "x.y"} {
		if err := CheckName(name); err != nil {
			t.Errorf("name %q refused: %v", name, err)
		}
	}
	bad := map[string]func(p *Project){
		"chosen not a take":    func(p *Project) { p.Lines[1].Chosen = 9 },
		"take twice":           func(p *Project) { p.Takes = []int{3, 3} },
		"negative take":        func(p *Project) { p.Lines[0].Takes = []int{-1} },
		"speaker 16":           func(p *Project) { p.Lines[0].Speaker = 16 },
		"gap 11 s":             func(p *Project) { p.Export.GapSeconds = 11 },
		"target -3 LUFS":       func(p *Project) { p.Export.TargetLUFS = -3 },
		"aac":                  func(p *Project) { p.Export.Format = "aac" },
		"captions ass":         func(p *Project) { p.Export.Captions = "ass" },
		"pause of -1 s":        func(p *Project) { g := -1.0; p.Lines[0].PauseAfter = &g },
		"top_p 0":              func(p *Project) { p.Sampling.TopP = 0 },
		"format 2":             func(p *Project) { p.Format = 2 },
		"seventeen voices":     func(p *Project) { p.Cast = make([]string, 17) },
		"negative max frames":  func(p *Project) { p.MaxFrames = -1 },
		"seventeen characters": func(p *Project) { p.Characters = make([]string, 17) },
		"a name with a tab":    func(p *Project) { p.Characters = []string{"", "Ann\tB"} },
		"a name of 61 bytes":   func(p *Project) { p.Characters = []string{strings.Repeat("a", 61)} },
		"a name's end space":   func(p *Project) { p.Characters = []string{"Ann "} },
	}
	s := newTestStore(t)
	for what, change := range bad {
		p := sample("P")
		change(&p)
		if _, err := s.Save(p); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: saved (%v)", what, err)
		}
	}
	if l, _ := s.List(); len(l) != 0 {
		t.Errorf("refused saves left %v", l)
	}
	if _, err := Parse([]byte(`{"format":1,"name":"x","sampling":{"temperature":1,"top_p":1,"top_k":0},"export":{"target_lufs":-16,"format":"wav"},"extra":1}`)); err == nil {
		t.Error("an unknown field was accepted")
	}
}

func FuzzParseProject(f *testing.F) {
	whole, err := json.Marshal(sample("Fuzz"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(whole)
	f.Add([]byte(`{"format":1,"name":"Fuzz","sampling":{"temperature":1,"top_p":0.9,"top_k":30},"export":{"gap_seconds":0.4,"target_lufs":-16,"format":"wav"}}`))
	f.Add([]byte(`{"format":1,"name":"Fuzz","sampling":{"temperature":1,"top_p":0.9,"top_k":30},"export":{"gap_s":0.4,"target_lufs":-16,"format":"wav"}}`))
	f.Add([]byte(`{"format":1,"name":"a","lines":[{"text":"x","speaker":1,"takes":[1,2],"chosen":2}],"takes":[1,2]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			return
		}
		// What Parse accepts, Check accepts, and Save writes.
		if err := p.Check(); err != nil {
			t.Fatalf("parsed project fails Check: %v", err)
		}
		if _, err := NewStore(t.TempDir()).Save(p); err != nil {
			t.Fatalf("parsed project does not save: %v", err)
		}
	})
}

package app

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"proscenium/app/studio"
	"proscenium/engine/api"
)

const radioPlay = "Title: Night Shift\n\nINT. LIGHTHOUSE\n\nADA\n(quietly)\nIs anyone there?\n\nBob: Only me.\nCy: And me."

// A screenplay becomes a project: its script, its characters named, each
// cast in the cloned voice of its name; the preview changes nothing.
func TestCreateProjectFromScreenplay(t *testing.T) {
	svc := loadedService(t, Config{Events: studio.NewHub(), VoicesDir: t.TempDir(), ProjectsDir: t.TempDir(), Open: func(string) (api.Engine, error) { return newPrimingEngine(), nil }})
	createVoices(t, svc, "Ada", "bob")
	pre, err := svc.ParseScreenplay(ScreenplayRequest{Text: radioPlay})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Ada", "bob"}; !reflect.DeepEqual(pre.Cast, want) || pre.Screenplay.Lines != 3 || len(pre.Screenplay.Characters) != 3 {
		t.Errorf("preview: cast %q (want %q), %d lines, characters %v", pre.Cast, want, pre.Screenplay.Lines, pre.Screenplay.Characters)
	}
	if list, _ := svc.Projects(); len(list) != 0 {
		t.Fatalf("the preview made projects: %v", list)
	}
	p, err := svc.CreateProjectFromScreenplay(ScreenplayProject{Name: "Night Shift", ScreenplayRequest: ScreenplayRequest{Text: radioPlay}, Cast: []string{"", "bob", ""}})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|speaker:0|>[quietly] Is anyone there?\n<|speaker:1|>Only me.\n<|speaker:2|>And me."
	if p.Script != want || !reflect.DeepEqual(p.Characters, []string{"ADA", "Bob", "Cy"}) || !reflect.DeepEqual(p.Cast, []string{"", "bob"}) {
		t.Errorf("project: %q %q %q", p.Script, p.Characters, p.Cast)
	}
	if back, err := svc.OpenProject("Night Shift"); err != nil || !reflect.DeepEqual(back.Characters, p.Characters) || back.Script != p.Script {
		t.Errorf("read back: %+v, %v", back, err)
	}
	if len(p.Lines) != 3 || p.Lines[1].Speaker != 1 || p.Lines[2].Text != "<|speaker:2|>And me." || p.Lines[0].Takes == nil {
		t.Errorf("lines: %+v", p.Lines)
	}

	// The project written as a Fountain screenplay, and to a file.
	f, err := svc.ProjectScreenplay("Night Shift")
	want = "Title: Night Shift\n\nADA\n(quietly)\nIs anyone there?\n\nBOB\nOnly me.\n\nCY\nAnd me.\n"
	if err != nil || f.Name != "Night Shift.fountain" || f.Text != want {
		t.Errorf("screenplay %+v, %v; want %q", f, err, want)
	}
	path := filepath.Join(t.TempDir(), "night.fountain")
	if got, err := svc.ExportScreenplay(ScreenplayExport{Project: "Night Shift", Path: path}); err != nil || got != path {
		t.Errorf("export: %q, %v", got, err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != want {
		t.Errorf("written: %q, %v", data, err)
	}
	for _, bad := range []ScreenplayExport{{Project: "Night Shift", Path: "night.fountain"}, {Project: "Night Shift", Path: filepath.Dir(path)}, {Project: "None", Path: path + "2"}} {
		if _, err := svc.ExportScreenplay(bad); err == nil {
			t.Errorf("%+v: written", bad)
		}
	}
	if _, err := os.Stat(path + "2"); err == nil {
		t.Error("a refused export wrote its file")
	}

	// What is refused makes nothing, and says why.
	for _, tc := range []struct {
		name string
		r    ScreenplayProject
		says string
	}{
		{"a name taken", ScreenplayProject{Name: "Night Shift", ScreenplayRequest: ScreenplayRequest{Text: radioPlay}}, "exists"},
		{"more voices than characters", ScreenplayProject{Name: "B", ScreenplayRequest: ScreenplayRequest{Text: radioPlay}, Cast: []string{"", "", "", "Ada"}}, "4 voices cast for the screenplay's 3 characters"},
		{"no dialogue", ScreenplayProject{Name: "C", ScreenplayRequest: ScreenplayRequest{Text: "INT. HALL\n\nSilence."}}, "found no dialogue"},
		{"a script past the studio's limit", ScreenplayProject{Name: "D", ScreenplayRequest: ScreenplayRequest{Text: strings.Repeat("Ada: "+strings.Repeat("word ", 100)+"\n", 140)}}, "the studio's limit is 64 KiB"},
	} {
		if _, err := svc.CreateProjectFromScreenplay(tc.r); err == nil || !strings.Contains(err.Error(), tc.says) || !(errors.Is(err, studio.ErrInvalid) || errors.Is(err, studio.ErrExists)) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.says)
		}
	}
	if list, _ := svc.Projects(); len(list) != 1 {
		t.Errorf("refused imports left projects: %v", list)
	}
}

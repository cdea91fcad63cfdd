package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"proscenium/app"
	"proscenium/app/projects"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/engine/api"
	"proscenium/engine/audio/decode"
	"proscenium/engine/audio/loudness"
	"proscenium/engine/open"
)

// studioProject makes what the studio leaves on disk: two takes of the
// demo model in a takes folder, and a project whose two lines chose them.
func studioProject(t *testing.T) (projectsDir, takesDir string, p projects.Project) {
	t.Helper()
	model := demoCheckpoint(t)
	eng, err := open.Open(context.Background(), model, open.Options{Backend: open.CPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	takesDir, projectsDir = t.TempDir(), t.TempDir()
	list, warnings := takes.Open(takes.Config{Dir: takesDir, Limit: func() int64 { return 1 << 30 }, Engine: func() (api.Engine, int, error) { return eng, eng.Info().SampleRate, nil }})
	if len(warnings) > 0 {
		t.Fatal(warnings)
	}
	var ids []int
	for i, text := range []string{"Good evening.", "Too quiet."} {
		req := api.SpeechRequest{Text: text, Sampling: api.DefaultSampling(), Seed: uint64(i), MaxFrames: 12}
		tk, err := list.StartTake(req, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if got := list.Takes(); got[0].ID == tk.ID && got[0].State != takes.TakeRunning && got[0].Stored {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the take did not finish")
			}
		}
		ids = append(ids, tk.ID)
	}
	p = projects.New("Act one", api.DefaultSampling(), 0, 0)
	p.Lines = []projects.Line{{Text: "Good evening.", Takes: ids[:1], Chosen: ids[0]}, {Text: "Too quiet.", Speaker: 1, Takes: ids[1:], Chosen: ids[1], FileName: "quiet_02"}}
	p.Takes = ids
	if _, err := projects.NewStore(projectsDir).Create(p); err != nil {
		t.Fatal(err)
	}
	return projectsDir, takesDir, p
}

// TestSceneCommand: the scene of a project the studio saved, exported from
// the command line as the project says with the flags given overriding it:
// the format from --out's extension, the loudness target reached (measured
// on the decoded file), line files by their names, captions; a second
// export is refused without --overwrite, and the project's and takes'
// folders are left as they were.
func TestSceneCommand(t *testing.T) {
	projectsDir, takesDir, _ := studioProject(t)
	before := folderState(t, projectsDir, takesDir)
	out := t.TempDir()
	args := []string{"--project", "Act one", "--projects-dir", projectsDir, "--takes-dir", takesDir,
		"--out", filepath.Join(out, "Scene.flac"), "--loudness", "-20", "--per-line", "--captions", "vtt", "--json"}
	var stdout, log bytes.Buffer
	if err := runScene(args, &stdout, &log); err != nil {
		t.Fatal(err)
	}
	var sum app.SceneExportResult
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	want := []string{"Scene.flac", "Scene.vtt", "Scene - line 01 (take 1).flac", "quiet_02.flac"}
	if len(sum.Files) != len(want) {
		t.Fatalf("files %v, want %v", sum.Files, want)
	}
	for i, f := range sum.Files {
		if f != filepath.Join(out, want[i]) {
			t.Errorf("file %d: %s, want %s", i, f, want[i])
		}
	}
	data, err := os.ReadFile(sum.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	pcm, format, err := decode.Decode(data, 60)
	if err != nil {
		t.Fatal(err)
	}
	lufs, err := loudness.Integrated(pcm.Mono(), pcm.Rate)
	if err != nil {
		t.Fatal(err)
	}
	if format != "FLAC" || math.Abs(lufs+20) > 0.1 || math.Abs(lufs-sum.Plan.Result) > 0.05 {
		t.Errorf("%s: %s at %.2f LUFS, want FLAC at -20 (the summary says %.2f)", sum.Files[0], format, lufs, sum.Plan.Result)
	}
	if vtt, err := os.ReadFile(sum.Files[1]); err != nil || !strings.Contains(string(vtt), "Too quiet.") {
		t.Errorf("captions %q, %v", vtt, err)
	}
	if err := runScene(args, &stdout, &log); !errors.Is(err, studio.ErrExists) {
		t.Errorf("a second export without --overwrite: %v", err)
	}
	if err := runScene(append(args, "--overwrite"), &stdout, &log); err != nil {
		t.Errorf("--overwrite: %v", err)
	}
	if after := folderState(t, projectsDir, takesDir); after != before {
		t.Errorf("the export changed the studio's folders:\n%s\nthen\n%s", before, after)
	}
}

// TestSceneCommandRefusals: every refusal names its cause and writes nothing.
func TestSceneCommandRefusals(t *testing.T) {
	projectsDir, takesDir, p := studioProject(t)
	out := t.TempDir()
	base := []string{"--projects-dir", projectsDir, "--takes-dir", takesDir}
	for _, c := range []struct {
		args  []string
		usage bool
		says  string
	}{
		{[]string{"--out", "x.wav"}, true, "--project is required"},
		{[]string{"--project", "Act one"}, true, "--out is required"},
		{[]string{"--project", "Act two", "--out", "x.wav"}, false, `no project called "Act two" (projects in ` + projectsDir + `: "Act one")`},
		{[]string{"--project", "Act one", "--out", "x.ogg"}, true, "a scene is .wav, .flac, .mp3 or .opus"},
		{[]string{"--project", "Act one", "--out", "x.wav", "--format", "mp3"}, true, "--out ends in .wav but --format is mp3"},
		{[]string{"--project", "Act one", "--out", "x", "--loudness", "-3"}, true, "the loudness target (-3 LUFS)"},
		{[]string{"--project", "Act one", "--out", "x", "--captions", "ass"}, true, `the captions "ass"`},
		{[]string{"--project", "Act one", "--out", "x", "--gap", "11"}, true, "the gap between lines (11 s)"},
	} {
		args := append(append([]string{}, base...), c.args...)
		for i, a := range args {
			if a == "--out" {
				args[i+1] = filepath.Join(out, args[i+1])
			}
		}
		err := runScene(args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || errors.Is(err, errUsage) != c.usage || !strings.Contains(err.Error(), c.says) {
			t.Errorf("scene %q: %v, want a (usage: %v) error saying %q", c.args, err, c.usage, c.says)
		}
	}
	// A line without a chosen take, and a chosen take gone from the folder.
	p.Lines[1].Chosen = 0
	if _, err := projects.NewStore(projectsDir).Save(p); err != nil {
		t.Fatal(err)
	}
	args := append(base, "--project", "Act one", "--out", filepath.Join(out, "x.wav"))
	if err := runScene(args, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "line 2 has no chosen take") {
		t.Errorf("a line without a chosen take: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(takesDir, "1")); err != nil {
		t.Fatal(err)
	}
	p.Lines[1].Chosen = p.Lines[1].Takes[0]
	if _, err := projects.NewStore(projectsDir).Save(p); err != nil {
		t.Fatal(err)
	}
	if err := runScene(args, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, studio.ErrNotFound) || !strings.Contains(err.Error(), "line 1: not found: no take #1 in "+takesDir) {
		t.Errorf("a chosen take gone: %v", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("refused exports wrote %v", left)
	}
}

// folderState lists every file under the folders with its size and time.
func folderState(t *testing.T, dirs ...string) string {
	t.Helper()
	var b strings.Builder
	for _, d := range dirs {
		err := filepath.Walk(d, func(path string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				b.WriteString(path + " " + fi.ModTime().String() + "\n")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestSceneTrimSilenceFlag: --trim-silence overrides the project's setting
// either way; without it the project's stands.
func TestSceneTrimSilenceFlag(t *testing.T) {
	for _, c := range []struct {
		args    []string
		project bool
		want    bool
	}{
		{nil, true, true},
		{nil, false, false},
		{[]string{"--trim-silence=false"}, true, false},
		{[]string{"--trim-silence"}, false, true},
	} {
		fs := newFlags("scene")
		over := defineSceneFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		ex := projects.DefaultExport()
		ex.TrimSilence = c.project
		got, _, err := sceneExportFlags(fs, ex, "/tmp/Scene.wav", over)
		if err != nil || got.TrimSilence != c.want {
			t.Errorf("%v on a project with trim_silence %v: %v, %v; want %v", c.args, c.project, got.TrimSilence, err, c.want)
		}
	}
}

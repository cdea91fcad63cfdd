package scene

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"proscenium/app/projects"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/engine/api"
	"proscenium/engine/audio/loudness"
	"proscenium/engine/audio/pcm"
)

// noise is seconds of speech-level noise, shaped a little so it is not flat.
func noise(seed uint64, rate int, seconds, level float64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]float32, int(seconds*float64(rate)))
	var prev float64
	for i := range out {
		x := r.NormFloat64() * level
		out[i] = float32(0.6*x + 0.4*prev)
		prev = x
	}
	return out
}

func TestSceneReachesTheTargetWithGaps(t *testing.T) {
	const rate = 44100
	lines := []Line{{Take: 3, PCM: noise(1, rate, 1.5, 0.01), Rate: rate}, {Take: 7, PCM: noise(2, rate, 2, 0.05), Rate: rate}}
	ex := projects.ExportSettings{GapSeconds: 0.4, TargetLUFS: -16, Format: "wav", PerLine: true}
	res, err := Assemble("Act one", lines, ex)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 3 || res.Files[0].Name != "Act one.wav" || !strings.Contains(res.Files[2].Name, "line 02 (take 7)") {
		t.Fatalf("files %v", names(res.Files))
	}
	w, err := pcm.ParseWAV(res.Files[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	if want := int(1.5*rate) + int(0.4*rate) + 2*rate; len(w.Samples) != want {
		t.Errorf("scene has %d samples, want %d (two lines and the gap)", len(w.Samples), want)
	}
	// The gap is silence.
	for _, x := range w.Samples[int(1.5*rate)+10 : int(1.9*rate)-10] {
		if x != 0 {
			t.Fatal("the gap between lines is not silent")
		}
	}
	got, err := loudness.Integrated(w.Samples, rate)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got+16) > 0.1 || res.Plan.Limited {
		t.Errorf("scene measures %.2f LUFS (plan %+v), want -16", got, res.Plan)
	}
	if tp := loudness.TruePeak(w.Samples, rate); tp > Ceiling+0.05 {
		t.Errorf("true peak %.2f dBTP over the ceiling", tp)
	}
	// A line file carries the line at the scene's gain.
	one, err := pcm.ParseWAV(res.Files[1].Data)
	if err != nil {
		t.Fatal(err)
	}
	gain := math.Pow(10, res.Plan.GainDB/20)
	if d := math.Abs(float64(one.Samples[1000]) - gain*float64(lines[0].PCM[1000])); d > 1.0/32767 {
		t.Errorf("line 1 sample 1000 off by %g from the scene's gain", d)
	}
}

// TestPauseAfterALine: a line's own pause replaces the scene's gap after it,
// and the captions move with it.
func TestPauseAfterALine(t *testing.T) {
	const rate = 44100
	long, none := 1.5, 0.0
	lines := []Line{
		{Take: 1, PCM: noise(1, rate, 1, 0.05), Rate: rate, Text: "One.", PauseAfter: &long},
		{Take: 2, PCM: noise(2, rate, 1, 0.05), Rate: rate, Text: "Two.", PauseAfter: &none},
		{Take: 3, PCM: noise(3, rate, 1, 0.05), Rate: rate, Text: "Three.", PauseAfter: &long}, // the last: nothing after it
		{Take: 4, PCM: noise(4, rate, 1, 0.05), Rate: rate, Text: "Four."},
	}
	res, err := Assemble("s", lines, projects.ExportSettings{GapSeconds: 0.4, TargetLUFS: -16, Format: "wav", Captions: projects.CaptionsSRT})
	if err != nil {
		t.Fatal(err)
	}
	// 1 + 1.5 + 1 + 0 + 1 + 1.5 + 1 seconds.
	if want := 7.0; math.Abs(res.Seconds-want) > 1e-9 {
		t.Errorf("the scene is %.3f s, want %.1f", res.Seconds, want)
	}
	starts := []float64{0, 2.5, 3.5, 6}
	for i, c := range res.Cues {
		if math.Abs(c.Start-starts[i]) > 0.011 {
			t.Errorf("line %d's cue starts at %.3f s, want %.1f", i+1, c.Start, starts[i])
		}
	}
	bad := 11.0
	lines[1].PauseAfter = &bad
	if _, err := Assemble("s", lines, projects.DefaultExport()); err == nil || !strings.Contains(err.Error(), "the pause after line 2 (11 s)") {
		t.Errorf("an 11 s pause: %v", err)
	}
}

func TestFLACAndRefusals(t *testing.T) {
	const rate = 44100
	line := Line{Take: 1, PCM: noise(3, rate, 1, 0.05), Rate: rate}
	res, err := Assemble("s", []Line{line}, projects.ExportSettings{TargetLUFS: -20, Format: "flac"})
	if err != nil || len(res.Files) != 1 || string(res.Files[0].Data[:4]) != "fLaC" {
		t.Fatalf("flac: %v %v", names(res.Files), err)
	}
	if _, err := Assemble("s", nil, projects.DefaultExport()); !errors.Is(err, ErrNoLines) {
		t.Errorf("no lines: %v", err)
	}
	other := Line{Take: 2, PCM: noise(4, 48000, 1, 0.05), Rate: 48000}
	if _, err := Assemble("s", []Line{line, other}, projects.DefaultExport()); err == nil {
		t.Error("two rates in one scene")
	}
	if _, err := Assemble("s", []Line{{Take: 5, PCM: make([]float32, rate), Rate: rate}}, projects.DefaultExport()); !errors.Is(err, loudness.ErrSilent) {
		t.Errorf("silent scene: %v", err)
	}
	if _, err := Assemble("s", []Line{line}, projects.ExportSettings{TargetLUFS: -16, Format: "aac"}); err == nil || !strings.Contains(err.Error(), `choose "wav", "flac", "mp3" or "opus"`) {
		t.Errorf("aac: %v", err)
	}
}

func TestZip(t *testing.T) {
	files := []File{{Name: "a.wav", Data: []byte("RIFF1")}, {Name: "a - line 01.wav", Data: []byte("RIFF2")}}
	b, err := Zip(files, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	r, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(r.File) != 2 || r.File[1].Name != "a - line 01.wav" {
		t.Fatalf("zip: %v", err)
	}
}

func names(fs []File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// fakeTakes serves takes' audio as takes.List does.
type fakeTakes map[int]takes.Take

func (f fakeTakes) TakePCM(id int) ([]float32, takes.Take, error) {
	t, ok := f[id]
	if !ok {
		return nil, takes.Take{}, fmt.Errorf("%w: no take #%d", studio.ErrNotFound, id)
	}
	return noise(uint64(id), t.SampleRate, 1, 0.05), t, nil
}

func TestFromProjectAndWrite(t *testing.T) {
	p := projects.New("Act one", api.DefaultSampling(), 0, 0)
	p.Lines = []projects.Line{{Text: "a", Speaker: 1, Takes: []int{1}, Chosen: 1}, {Text: "b", Takes: []int{2}}}
	p.Export.PerLine = true
	p.Export.Captions = projects.CaptionsSRT
	from := fakeTakes{1: {ID: 1, State: takes.TakeFinished, SampleRate: 44100}, 2: {ID: 2, State: takes.TakeRunning, SampleRate: 44100}}
	if _, err := FromProject(p, from); !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), "line 2 has no chosen take") {
		t.Errorf("a line without a chosen take: %v", err)
	}
	p.Lines[1].Chosen = 2
	if _, err := FromProject(p, from); !errors.Is(err, studio.ErrBusy) {
		t.Errorf("a running take: %v", err)
	}
	// The captions say what each take was asked to say, by who said it.
	from[1] = takes.Take{ID: 1, State: takes.TakeFinished, SampleRate: 44100, Request: api.SpeechRequest{Text: "Hello [laughs]."}, Voices: []string{"Bea"}}
	from[2] = takes.Take{ID: 2, State: takes.TakeFinished, SampleRate: 44100, Request: api.SpeechRequest{Text: "[calm] Bye."}}
	res, err := FromProject(p, from)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cues) != 2 || res.Cues[0].Text != "Hello." || res.Cues[0].Voice != "Bea" || res.Cues[1].Text != "Bye." || res.Cues[1].Voice != "Speaker 0" {
		t.Errorf("cues %+v", res.Cues)
	}
	// A speaker the project names is called so, whatever voice it speaks in.
	named := p
	named.Characters = []string{"Narrator", "Anna"}
	if res, err := FromProject(named, from); err != nil || res.Cues[0].Voice != "Anna" || res.Cues[1].Voice != "Narrator" {
		t.Errorf("named speakers' cues %+v, %v", res.Cues, err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "Scene.wav")
	files, err := Write(res, p.Name, path, false)
	if err != nil || len(files) != 4 || files[1] != filepath.Join(dir, "Scene.srt") || files[3] != filepath.Join(dir, "Scene - line 02 (take 2).wav") {
		t.Fatalf("written %v, %v", files, err)
	}
	// Nothing is replaced without being asked.
	if _, err := Write(res, p.Name, path, false); !errors.Is(err, studio.ErrExists) {
		t.Errorf("second write: %v", err)
	}
	if _, err := Write(res, p.Name, "relative.wav", true); !errors.Is(err, studio.ErrInvalid) {
		t.Errorf("relative path: %v", err)
	}
	// A full disk says so.
	write = func(string, []byte) error { return syscall.ENOSPC }
	defer func() { write = pcm.WriteFileAtomic }()
	if _, err := Write(res, p.Name, filepath.Join(dir, "Other.wav"), false); err == nil || !strings.Contains(err.Error(), "the disk is full") {
		t.Errorf("full disk: %v", err)
	}
	d, err := AsDownload(res, p.Name, time.Now())
	if err != nil || d.Name != "Act one.zip" || d.MediaType != "application/zip" || math.Abs(d.Loudness+16) > 1e-6 {
		t.Errorf("download %q %q %v %v", d.Name, d.MediaType, d.Loudness, err)
	}
}

// TestLineFileNames: a line that names its file gets it, whatever the
// scene is called (Write keeps it beside the scene as named; the zip holds
// it as named); two files of the same name in any case, between lines or
// with the scene itself, are refused before anything is written.
func TestLineFileNames(t *testing.T) {
	const rate = 44100
	lines := []Line{{Take: 1, PCM: noise(1, rate, 1, 0.1), Rate: rate, FileName: "guard_01"}, {Take: 2, PCM: noise(2, rate, 1, 0.1), Rate: rate}}
	ex := projects.ExportSettings{GapSeconds: 0.4, TargetLUFS: -16, Format: "flac", PerLine: true}
	res, err := Assemble("Act one", lines, ex)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Files); strings.Join(got, "|") != "Act one.flac|guard_01.flac|Act one - line 02 (take 2).flac" {
		t.Errorf("files %v", got)
	}
	dir := t.TempDir()
	written, err := Write(res, "Act one", filepath.Join(dir, "Scene 3.flac"), false)
	if err != nil || strings.Join(written, "|") != strings.Join([]string{filepath.Join(dir, "Scene 3.flac"), filepath.Join(dir, "guard_01.flac"), filepath.Join(dir, "Scene 3 - line 02 (take 2).flac")}, "|") {
		t.Errorf("written %v, %v", written, err)
	}
	// The scene saved under the line's name would be replaced by it.
	if _, err := Write(res, "Act one", filepath.Join(dir, "GUARD_01.flac"), true); !errors.Is(err, studio.ErrInvalid) || !strings.Contains(err.Error(), `"guard_01.flac"`) {
		t.Errorf("the scene named as a line's file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "GUARD_01.flac")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused export wrote the scene: %v", err)
	}
	lines[1].FileName = "Act One"
	if _, err := Assemble("Act one", lines, ex); err == nil || !strings.Contains(err.Error(), `"Act One.flac"`) {
		t.Errorf("a line's file named as the scene: %v", err)
	}
}

package scene

import (
	"archive/zip"
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"proscenium/app/projects"
	"proscenium/engine/audio"
	"proscenium/engine/audio/loudness"
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
	w, err := audio.ParseWAV(res.Files[0].Data)
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
	one, err := audio.ParseWAV(res.Files[1].Data)
	if err != nil {
		t.Fatal(err)
	}
	gain := math.Pow(10, res.Plan.GainDB/20)
	if d := math.Abs(float64(one.Samples[1000]) - gain*float64(lines[0].PCM[1000])); d > 1.0/32767 {
		t.Errorf("line 1 sample 1000 off by %g from the scene's gain", d)
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
	if _, err := Assemble("s", []Line{line}, projects.ExportSettings{TargetLUFS: -16, Format: "mp3"}); err == nil {
		t.Error("mp3 accepted")
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

package scene

import (
	"errors"
	"math"
	"testing"

	"proscenium/app/projects"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
)

// silentTake answers one take id with no audio, the rest as from does.
type silentTake struct {
	fakeTakes
	id int
}

func (s silentTake) TakePCM(id int) ([]float32, takes.Take, error) {
	p, t, err := s.fakeTakes.TakePCM(id)
	if id == s.id {
		p = nil
	}
	if id == 6 {
		return nil, t, errors.New("pcm.f32: unexpected end of file")
	}
	return p, t, err
}

// paddedTakes answers as fakeTakes with silence around each take's sound.
type paddedTakes struct{ fakeTakes }

func (p paddedTakes) TakePCM(id int) ([]float32, takes.Take, error) {
	_, t, err := p.fakeTakes.TakePCM(id)
	return padded(uint64(id), 0.5, 1, 0.8), t, err
}

// TestPreviewSoundsAsTheExport: with every line chosen, the preview is the
// exported scene's audio (the same samples at the same gain, up to the
// WAV's 16 bits, each take's silent ends trimmed as a new project's
// export trims them), and says where each line starts and ends.
func TestPreviewSoundsAsTheExport(t *testing.T) {
	p := projects.New("Act one", api.DefaultSampling(), 0, 0)
	pause := 1.0
	p.Lines = []projects.Line{{Text: "a", Takes: []int{1}, Chosen: 1, PauseAfter: &pause}, {Text: "b", Takes: []int{2}, Chosen: 2}, {Text: "c", Takes: []int{3}, Chosen: 3}}
	from := paddedTakes{fakeTakes{}}
	for id := 1; id <= 3; id++ {
		from.fakeTakes[id] = takes.Take{ID: id, State: takes.TakeFinished, SampleRate: 44100}
	}
	res, err := FromProject(p, from)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcm.ParseWAV(res.Files[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	pv, err := PreviewProject(p, from)
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.PCM) != len(w.Samples) || pv.Rate != 44100 || math.Abs(pv.Plan.GainDB-res.Plan.GainDB) > 1e-9 {
		t.Fatalf("preview %d samples at %+v, export %d at %+v", len(pv.PCM), pv.Plan, len(w.Samples), res.Plan)
	}
	for i, x := range pv.PCM {
		if d := math.Abs(float64(x - w.Samples[i])); d > 1.0/32767 {
			t.Fatalf("sample %d: preview %g, export %g", i, x, w.Samples[i])
		}
	}
	// 1.2 s each (0.05 s before the sound, 0.15 s after), a 1 s pause after
	// line 1, the scene's 0.4 s after line 2.
	want := []PreviewLine{{Line: 1, Take: 1, Start: 0, End: 1.2}, {Line: 2, Take: 2, Start: 2.2, End: 3.4}, {Line: 3, Take: 3, Start: 3.8, End: 5}}
	if len(pv.Lines) != 3 || len(pv.Skipped) != 0 || pv.Note != "" {
		t.Fatalf("lines %+v skipped %+v", pv.Lines, pv.Skipped)
	}
	for i, l := range pv.Lines {
		if l.Line != want[i].Line || l.Take != want[i].Take || math.Abs(l.Start-want[i].Start) > 1e-4 || math.Abs(l.End-want[i].End) > 1e-4 {
			t.Errorf("line %d at %+v, want %+v", i+1, l, want[i])
		}
	}
	// Each line's loudness is measured in the scene: the three lines are alike noise.
	for _, l := range pv.Lines {
		if l.Loudness == nil || math.Abs(*l.Loudness-pv.Plan.Result) > 1.5 {
			t.Errorf("line %d measures %v LUFS in a scene of %.2f", l.Line, l.Loudness, pv.Plan.Result)
		}
	}
	if pv.Peaks.Samples != len(pv.PCM) || len(pv.Peaks.Values) != 2*((len(pv.PCM)+takes.PeakBucket-1)/takes.PeakBucket) {
		t.Errorf("peaks cover %d samples in %d values", pv.Peaks.Samples, len(pv.Peaks.Values))
	}
}

// TestPreviewLeavesOutLines: a line without a chosen take with audio is
// left out, by number and reason; the others keep their numbers, and the
// pause after a line still follows it. With none left, nothing plays.
func TestPreviewLeavesOutLines(t *testing.T) {
	p := projects.New("Act one", api.DefaultSampling(), 0, 0)
	pause := 2.0
	p.Lines = []projects.Line{
		{Text: "a", Takes: []int{1}, Chosen: 1, PauseAfter: &pause},
		{Text: "b"},
		{Text: "c", Takes: []int{3}, Chosen: 3},
		{Text: "d", Takes: []int{4}, Chosen: 4},
		{Text: "e", Takes: []int{5}, Chosen: 5},
		{Text: "f", Takes: []int{9}, Chosen: 9},
		{Text: "g", Takes: []int{6}, Chosen: 6},
	}
	from := silentTake{fakeTakes{
		1: {ID: 1, State: takes.TakeFinished, SampleRate: 44100},
		3: {ID: 3, State: takes.TakeRunning, SampleRate: 44100},
		4: {ID: 4, State: takes.TakeFinished, SampleRate: 44100},
		5: {ID: 5, State: takes.TakeFinished, SampleRate: 44100},
		6: {ID: 6, State: takes.TakeFinished, SampleRate: 44100},
	}, 4}
	pv, err := PreviewProject(p, from)
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.Lines) != 2 || pv.Lines[0].Line != 1 || pv.Lines[1].Line != 5 || math.Abs(pv.Lines[1].Start-3) > 1e-4 {
		t.Errorf("lines %+v, want 1 and 5, line 5 after line 1's 2 s pause", pv.Lines)
	}
	want := "left out: line 2 (no chosen take), line 3 (take #3 is still running), line 4 (take #4 has no audio), line 6 (take #9 is gone), line 7 (take #6 cannot be read: pcm.f32: unexpected end of file)"
	if got := pv.Note; got != want {
		t.Errorf("note %q\nwant %q", got, want)
	}
	p.Lines = p.Lines[1:4]
	if _, err := PreviewProject(p, from); !errors.Is(err, studio.ErrInvalid) || err.Error() != ErrNothingToPlay.Error() {
		t.Errorf("nothing to play: %v", err)
	}
}

// BenchmarkPreviewProject: a scene of 40 lines of 5 s (3.6 minutes with
// the gaps), each take trimmed, levelled and measured: what Play scene
// costs before the first sound. The takes' audio is made before the timer.
func BenchmarkPreviewProject(b *testing.B) {
	p := projects.New("Act one", api.DefaultSampling(), 0, 0)
	from := storedTakes{}
	for id := 1; id <= 40; id++ {
		from[id] = storedTake{takes.Take{ID: id, State: takes.TakeFinished, SampleRate: 44100}, padded(uint64(id), 0.3, 4.2, 0.5)}
		p.Lines = append(p.Lines, projects.Line{Text: "x", Takes: []int{id}, Chosen: id})
	}
	for b.Loop() {
		if _, err := PreviewProject(p, from); err != nil {
			b.Fatal(err)
		}
	}
}

// storedTakes answers takes whose audio is already made.
type storedTakes map[int]storedTake

type storedTake struct {
	take takes.Take
	pcm  []float32
}

func (s storedTakes) TakePCM(id int) ([]float32, takes.Take, error) {
	t := s[id]
	return t.pcm, t.take, nil
}

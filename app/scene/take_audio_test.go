package scene

import (
	"math"
	"strings"
	"testing"

	"proscenium/app/projects"
	"proscenium/engine/api"
	"proscenium/engine/audio/pcm"
)

// padded is seconds of noise with silence before and after it.
func padded(seed uint64, before, seconds, after float64) []float32 {
	const rate = 44100
	out := make([]float32, int(before*rate))
	out = append(out, noise(seed, rate, seconds, 0.05)...)
	return append(out, make([]float32, int(after*rate))...)
}

// TestTrimSilence: with TrimSilence the gap is the silence between voices:
// each take keeps 0.05 s before its first sound and 0.15 s after its last,
// in the scene, its line files and its captions; without it, every sample.
func TestTrimSilence(t *testing.T) {
	const rate = 44100
	lines := []Line{{Take: 1, PCM: padded(1, 0.5, 1, 0.8), Rate: rate, Text: "One."}, {Take: 2, PCM: padded(2, 0.3, 2, 1.2), Rate: rate, Text: "Two."}}
	ex := projects.ExportSettings{GapSeconds: 0.4, TargetLUFS: -16, Format: "wav", PerLine: true, Captions: projects.CaptionsSRT}
	for _, c := range []struct {
		trim       bool
		one, scene float64 // seconds
	}{
		{false, 2.3, 2.3 + 0.4 + 3.5},
		{true, 1.2, 1.2 + 0.4 + 2.2},
	} {
		ex.TrimSilence = c.trim
		res, err := Assemble("Scene", lines, ex)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Seconds-c.scene) > 0.011 {
			t.Errorf("trim %v: the scene lasts %.3f s, want %.3f", c.trim, res.Seconds, c.scene)
		}
		one, err := pcm.ParseWAV(res.Files[2].Data)
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(len(one.Samples)) / rate; math.Abs(got-c.one) > 0.011 {
			t.Errorf("trim %v: line 1's file lasts %.3f s, want %.3f", c.trim, got, c.one)
		}
		// Line 2 speaks from its own start: after line 1, the gap and what is left of its leading silence.
		wantCue := c.one + 0.4 + map[bool]float64{false: 0.3, true: 0.05}[c.trim]
		if len(res.Cues) != 2 || math.Abs(res.Cues[1].Start-wantCue) > 0.011 {
			t.Errorf("trim %v: cues %+v, line 2's from %.3f s", c.trim, res.Cues, wantCue)
		}
	}
	// A take that speaks throughout, or not at all, is kept whole.
	for _, p := range [][]float32{noise(3, rate, 1, 0.05), make([]float32, rate)} {
		if got := trimSilence(p, rate); len(got) != len(p) {
			t.Errorf("trimmed %d of %d samples", len(p)-len(got), len(p))
		}
	}
}

// rms is the root mean square of pcm.
func rms(pcm []float32) float64 {
	var sum float64
	for _, x := range pcm {
		sum += float64(x) * float64(x)
	}
	return math.Sqrt(sum / float64(len(pcm)))
}

// TestLineGain: a line's own gain sets its level against the others in
// the scene (and its line file), before the scene's one gain to the
// target; the take's own audio is left as it was.
func TestLineGain(t *testing.T) {
	const rate = 44100
	take := noise(2, rate, 1, 0.05)
	kept := append([]float32(nil), take...)
	lines := []Line{{Take: 1, PCM: noise(1, rate, 1, 0.05), Rate: rate}, {Take: 2, PCM: take, Rate: rate, GainDB: 6}}
	ex := projects.ExportSettings{GapSeconds: 0.5, TargetLUFS: -20, Format: "wav", PerLine: true}
	res, err := Assemble("Scene", lines, ex)
	if err != nil {
		t.Fatal(err)
	}
	w, err := pcm.ParseWAV(res.Files[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	one, two := w.Samples[:rate], w.Samples[rate+rate/2:]
	want := 6 + 20*math.Log10(rms(take)/rms(lines[0].PCM))
	if got := 20 * math.Log10(rms(two)/rms(one)); math.Abs(got-want) > 0.05 {
		t.Errorf("line 2 is %.2f dB over line 1 in the scene, want %.2f", got, want)
	}
	f2, err := pcm.ParseWAV(res.Files[2].Data)
	if err != nil {
		t.Fatal(err)
	}
	if got := 20 * math.Log10(rms(f2.Samples)/rms(take)); math.Abs(got-(res.Plan.GainDB+6)) > 0.05 {
		t.Errorf("line 2's file is %.2f dB over its take, want the scene's %.2f + 6", got, res.Plan.GainDB)
	}
	for i := range take {
		if take[i] != kept[i] {
			t.Fatal("the line's gain changed the take's own audio")
		}
	}
	p := projects.New("x", api.DefaultSampling(), 0, 0)
	for _, db := range []float64{-24.5, 25, math.NaN()} {
		p.Lines = []projects.Line{{Text: "a", GainDB: &db}}
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), "line 1: its gain") {
			t.Errorf("a gain of %v dB: %v", db, err)
		}
	}
}

package scene

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"proscenium/app/projects"
	"proscenium/app/studio"
	"proscenium/app/takes"
	"proscenium/engine/audio/loudness"
)

// Preview is a project's scene as the studio plays it before it is
// exported: the chosen takes of the lines that have one with audio, in
// order, prepared as the export prepares them (silent ends trimmed when it
// trims them, each at its line's own gain), with the scene's gap or a
// line's own pause between them, at the gain Export scene would give them
// (the loudness target, the true peak under the Ceiling). Lines without
// such a take are left out, each with the reason, so a scene being made
// can be heard as far as it goes.
type Preview struct {
	ID      int           `json:"id"` // the service's number for it (PlayScene, the browser's PCM)
	Project string        `json:"project"`
	Lines   []PreviewLine `json:"lines"`
	Skipped []Skipped     `json:"skipped"`
	Note    string        `json:"note"` // the lines left out, for a status line ("" when none)
	Seconds float64       `json:"duration_s"`
	Rate    int           `json:"rate_hz"`
	Plan    loudness.Plan `json:"plan"`
	Peaks   takes.Peaks   `json:"peaks"`
	PCM     []float32     `json:"-"`
}

// PreviewLine is where one line's take sits in the preview.
type PreviewLine struct {
	Line  int     `json:"line"` // from 1, the project's numbering
	Take  int     `json:"take"`
	Start float64 `json:"start_s"`
	End   float64 `json:"end_s"`
	// Loudness is the line's integrated loudness in the scene (its gain and
	// the scene's applied), to level the lines by; nil when it is too short
	// to measure (under 0.4 s) or silent.
	Loudness *float64 `json:"loudness_lufs,omitempty"`
}

// Skipped is a line the preview leaves out, and why.
type Skipped struct {
	Line int    `json:"line"` // from 1
	Why  string `json:"why"`
}

// skippedNote says which lines are left out ("" when none), for a status
// line.
func skippedNote(skipped []Skipped) string {
	if len(skipped) == 0 {
		return ""
	}
	parts := make([]string, len(skipped))
	for i, s := range skipped {
		parts[i] = fmt.Sprintf("line %d (%s)", s.Line, s.Why)
	}
	return "left out: " + strings.Join(parts, ", ")
}

// ErrNothingToPlay: no line has a chosen take with audio.
var ErrNothingToPlay = errors.New("no line has a chosen take with audio: star a take of a line to hear the scene")

// PreviewProject assembles p's scene for listening (Preview): a take that
// is gone, or cannot be read, leaves its line out with the reason (the
// export refuses them instead).
func PreviewProject(p projects.Project, from TakeAudio) (Preview, error) {
	var lines []Line
	var numbers []int
	pv := Preview{Project: p.Name, Skipped: []Skipped{}}
	who := speakersOf(p)
	for i, l := range p.Lines {
		skip := func(why string) { pv.Skipped = append(pv.Skipped, Skipped{Line: i + 1, Why: why}) }
		if l.Chosen == 0 {
			skip("no chosen take")
			continue
		}
		pcm, t, err := from.TakePCM(l.Chosen)
		switch {
		case errors.Is(err, studio.ErrNotFound):
			skip(fmt.Sprintf("take #%d is gone", l.Chosen))
			continue
		case err != nil:
			skip(fmt.Sprintf("take #%d cannot be read: %v", l.Chosen, err))
			continue
		case t.State == takes.TakeRunning:
			skip(fmt.Sprintf("take #%d is still running", t.ID))
			continue
		case len(pcm) == 0:
			skip(fmt.Sprintf("take #%d has no audio", t.ID))
			continue
		}
		lines = append(lines, lineOf(l, t, pcm, who))
		numbers = append(numbers, i+1)
	}
	if len(lines) == 0 {
		return Preview{}, &kindError{studio.ErrInvalid, ErrNothingToPlay.Error()}
	}
	lines = prepared(lines, p.Export.TrimSilence)
	j, err := join(lines, p.Export.GapSeconds)
	if err != nil {
		return Preview{}, &kindError{studio.ErrInvalid, err.Error()}
	}
	plan, err := level(j.pcm, j.rate, p.Export.TargetLUFS)
	if err != nil {
		return Preview{}, &kindError{studio.ErrInvalid, err.Error()}
	}
	rate := float64(j.rate)
	for k, l := range lines {
		from, to := j.starts[k], j.starts[k]+len(l.PCM)
		pl := PreviewLine{Line: numbers[k], Take: l.Take, Start: float64(from) / rate, End: float64(to) / rate}
		if lufs, err := loudness.Integrated(j.pcm[from:to], j.rate); err == nil && !math.IsInf(lufs, -1) {
			pl.Loudness = &lufs
		}
		pv.Lines = append(pv.Lines, pl)
	}
	pv.PCM, pv.Rate, pv.Plan = j.pcm, j.rate, plan
	pv.Seconds = float64(len(j.pcm)) / rate
	pv.Peaks = takes.PeaksOf(j.pcm)
	pv.Note = skippedNote(pv.Skipped)
	return pv, nil
}

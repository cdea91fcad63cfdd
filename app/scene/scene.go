// Package scene assembles a scene from the chosen take of each line of a
// project: the lines' audio in order with silence between them (the
// scene's gap, or a line's own pause after it), brought to a loudness
// target with the true peak under a ceiling (engine/audio/loudness),
// encoded as WAV, FLAC, MP3 or Opus (engine/audio/encode; a lossy file is
// read back, lossy.go), and, when asked, one file per line at the scene's
// gain so the lines keep their balance, and
// captions of what the lines say (captions.go). It owns no files: the
// caller writes or sends what it returns (bundle.go packs several files
// into one zip for a browser).
package scene

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"proscenium/app/projects"
	"proscenium/engine/audio/encode"
	"proscenium/engine/audio/loudness"
)

// Ceiling is the true-peak ceiling every scene keeps (EBU R128's -1 dBTP).
const Ceiling = -1.0

// Line is one line's chosen take.
type Line struct {
	Take  int       // its id, for names and messages
	PCM   []float32 // mono
	Rate  int       // Hz
	Text  string    // what the take was asked to say, markup and all (for captions)
	Voice string    // who says it, as captions name the speaker ("": not named)
	// PauseAfter is the silence after this line, in seconds; nil: the
	// scene's gap.
	PauseAfter *float64
	// GainDB is the line's own gain in the scene (0: as made).
	GainDB float64
	// FileName is the line's own file's name without its extension ("":
	// the scene's name with the line's number and take).
	FileName string
}

// File is one encoded file.
type File struct {
	Name string `json:"name"`
	Data []byte `json:"-"`
	// Own: the name is the line's own (Line.FileName), not the scene's
	// with a suffix, so Write keeps it whatever the scene is called.
	Own bool `json:"-"`
}

// Result is the scene's files (the scene first) and its loudness plan.
type Result struct {
	Files   []File        `json:"files"`
	Plan    loudness.Plan `json:"plan"`
	Seconds float64       `json:"duration_s"`
	Rate    int           `json:"rate_hz"`
	Cues    []Cue         `json:"cues,omitempty"` // the captions' cues, when asked for
	// LineFiles are the line files' figures, in line order, when asked for.
	LineFiles []LineFile `json:"line_files,omitempty"`
}

// LineFile is what one line's file took and measures. It has the scene's
// gain (Plan.GainDB) unless its lossy encoding would pass the ceiling:
// then it is lowered by the excess (Lowered < 0), as the scene is.
type LineFile struct {
	Line     int     `json:"line"` // from 1
	Take     int     `json:"take"`
	Lowered  float64 `json:"lowered_db"`     // under the scene's gain: 0 or less
	TruePeak float64 `json:"true_peak_dbtp"` // as decoded for MP3 and Opus; the PCM's for WAV and FLAC
}

// LoweredNote names the line files kept quieter than the scene, for a
// status line ("" when none was).
func (r Result) LoweredNote() string {
	var parts []string
	for _, l := range r.LineFiles {
		if l.Lowered < 0 {
			parts = append(parts, fmt.Sprintf("line %d's file %.1f dB", l.Line, l.Lowered))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("%s under the scene's gain, to keep each true peak under %.0f dBTP", strings.Join(parts, ", "), Ceiling)
}

// ErrNoLines is returned when no line has a chosen take.
var ErrNoLines = errors.New("no line has a chosen take: star a take of each line to export")

// Assemble builds the scene called base from lines with the project's
// export settings.
func Assemble(base string, lines []Line, ex projects.ExportSettings) (Result, error) {
	if len(lines) == 0 {
		return Result{}, ErrNoLines
	}
	if err := ex.Check(); err != nil {
		return Result{}, err
	}
	f, _ := encode.Lookup(ex.Format) // every scene format is an encoder's
	lines = prepared(lines, ex.TrimSilence)
	j, err := join(lines, ex.GapSeconds)
	if err != nil {
		return Result{}, err
	}
	pcm, rate := j.pcm, j.rate
	var cues []Cue
	if ex.Captions != projects.CaptionsNone {
		for i, l := range lines {
			cues = append(cues, lineCues(l, j.starts[i], rate)...)
		}
	}
	// Every file's name, checked before any is encoded.
	names := []string{base + "." + ex.Format}
	if ex.Captions != projects.CaptionsNone {
		names = append(names, base+"."+ex.Captions)
	}
	var lineNames []string
	if ex.PerLine {
		for i, l := range lines {
			name := fmt.Sprintf("%s - line %02d (take %d).%s", base, i+1, l.Take, ex.Format)
			if l.FileName != "" {
				name = l.FileName + "." + ex.Format
			}
			lineNames = append(lineNames, name)
		}
	}
	if err := distinctNames(append(names, lineNames...)); err != nil {
		return Result{}, err
	}
	res := Result{Seconds: float64(len(pcm)) / float64(rate), Rate: rate}
	var captions []byte
	if ex.Captions != projects.CaptionsNone {
		holdShortCues(cues, res.Seconds)
		res.Cues, captions = cues, formatCaptions(ex.Captions, cues)
	}
	plan, err := level(pcm, rate, ex.TargetLUFS)
	if err != nil {
		return Result{}, err
	}
	data, err := encodeMeasured(f, rate, pcm, &plan)
	if err != nil {
		return Result{}, fmt.Errorf("scene: %w", err)
	}
	res.Plan = plan
	res.Files = append(res.Files, File{Name: names[0], Data: data})
	if captions != nil {
		res.Files = append(res.Files, File{Name: names[1], Data: captions})
	}
	if ex.PerLine {
		for i, l := range lines {
			one := append([]float32(nil), l.PCM...)
			loudness.Apply(one, plan.GainDB)
			data, lowered, peak, err := encodeUnderCeiling(f, rate, one, Ceiling)
			if err != nil {
				return Result{}, fmt.Errorf("line %d: %w", i+1, err)
			}
			res.Files = append(res.Files, File{Name: lineNames[i], Data: data, Own: l.FileName != ""})
			res.LineFiles = append(res.LineFiles, LineFile{Line: i + 1, Take: l.Take, Lowered: lowered, TruePeak: peak})
		}
	}
	return res, nil
}

// joined is the lines' audio in order, with the silence before each line
// but the first: the pause after the line before it.
type joined struct {
	pcm    []float32
	rate   int
	starts []int // each line's first sample in pcm
}

// join joins lines with gap seconds between them (or a line's own pause
// after it); every line must have audio, all at one rate.
func join(lines []Line, gap float64) (joined, error) {
	rate := lines[0].Rate
	total := 0
	for i, l := range lines {
		if l.Rate != rate {
			return joined{}, fmt.Errorf("take #%d is at %d Hz, take #%d at %d Hz: a scene has one rate", l.Take, l.Rate, lines[0].Take, rate)
		}
		if len(l.PCM) == 0 {
			return joined{}, fmt.Errorf("line %d: take #%d has no audio", i+1, l.Take)
		}
		total += len(l.PCM)
	}
	gaps := make([]int, len(lines))
	for i := 1; i < len(lines); i++ {
		seconds := gap
		if g := lines[i-1].PauseAfter; g != nil {
			if err := projects.CheckSilence(fmt.Sprintf("the pause after line %d", i), *g); err != nil {
				return joined{}, err
			}
			seconds = *g
		}
		gaps[i] = int(math.Round(seconds * float64(rate)))
		total += gaps[i]
	}
	j := joined{pcm: make([]float32, 0, total), rate: rate, starts: make([]int, len(lines))}
	for i, l := range lines {
		j.pcm = append(j.pcm, make([]float32, gaps[i])...)
		j.starts[i] = len(j.pcm)
		j.pcm = append(j.pcm, l.PCM...)
	}
	return j, nil
}

// level brings pcm to target LUFS in place with one gain that keeps its
// true peak at or under the Ceiling, and returns the plan.
func level(pcm []float32, rate int, target float64) (loudness.Plan, error) {
	plan, err := loudness.PlanGain(pcm, rate, target, Ceiling)
	if err != nil {
		return plan, fmt.Errorf("scene loudness: %w", err)
	}
	loudness.Apply(pcm, plan.GainDB)
	return plan, nil
}

// distinctNames refuses two file names that are the same in any case: a
// file system may not tell them apart, and the second file would replace
// the first.
func distinctNames(names []string) error {
	seen := map[string]string{}
	for _, n := range names {
		key := strings.ToLower(n)
		if other, ok := seen[key]; ok {
			return fmt.Errorf("two files of the scene would be called %q (and %q): rename a line's file", n, other)
		}
		seen[key] = n
	}
	return nil
}

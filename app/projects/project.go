package projects

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"proscenium/app/studio"
	"proscenium/engine/api"
)

// FormatVersion is the project.json format this package writes and reads.
const FormatVersion = 1

// Limits on what a project holds (a project.json is read whole).
const (
	MaxNameBytes   = 80
	MaxScriptBytes = 256 << 10
	MaxLines       = 2000
	MaxTakesOfLine = 1000
	MaxTakes       = 20000
	MaxSpeakers    = 16 // <|speaker:0|> … <|speaker:15|>
	maxVoiceName   = 200
	// MaxCharacterName caps a speaker's name (Project.Characters).
	MaxCharacterName = 60
	maxFileBytes     = 16 << 20
)

// Project is one project.json.
type Project struct {
	Format int    `json:"format"`
	Name   string `json:"name"`
	Script string `json:"script"`
	// Cast names the voice of <|speaker:0|>, <|speaker:1|>, … ("" is the
	// model's own voice).
	Cast []string `json:"cast"`
	// Characters names who speaks as <|speaker:0|>, <|speaker:1|>, … ("":
	// unnamed, "Speaker N"): the cast chips, the lines and the captions
	// say it. A screenplay's import names them (app/script).
	Characters []string     `json:"characters,omitempty"`
	Sampling   api.Sampling `json:"sampling"`
	Seed       uint64       `json:"seed"`
	// MaxFrames of each take (0: the studio's default).
	MaxFrames int    `json:"max_frames"`
	Lines     []Line `json:"lines"`
	// Takes lists every studio take made in this project, oldest first
	// (the lines' takes and the whole-script takes).
	Takes  []int          `json:"takes"`
	Export ExportSettings `json:"export"`
	// SavedMs is when it was last saved (Unix milliseconds; set by Save).
	SavedMs int64 `json:"saved_ms"`
}

// Line is one line of the script: a paragraph, or what one speaker tag
// starts. Its text is kept so that lines can be matched again after the
// script is edited.
type Line struct {
	Text    string `json:"text"`
	Speaker int    `json:"speaker"`
	Takes   []int  `json:"takes"`  // oldest first
	Chosen  int    `json:"chosen"` // the take the scene uses (0: none chosen)
	// PauseAfter is the silence after this line in the scene, in seconds;
	// nil: the scene's gap (ExportSettings.GapSeconds).
	PauseAfter *float64 `json:"pause_after_s,omitempty"`
	// GainDB raises (or lowers) this line's take in the scene, in dB,
	// before the scene is brought to its loudness target; nil: as made.
	GainDB *float64 `json:"gain_db,omitempty"`
	// FileName names the line's own file when the scene is exported with
	// one file per line (without its extension; line_file.go); "": the
	// scene's name with the line's number and take.
	FileName string `json:"file_name,omitempty"`
}

// ExportSettings say how the scene is exported.
type ExportSettings struct {
	GapSeconds float64 `json:"gap_s"` // silence between lines (read also as gap_seconds: export_json.go)
	TargetLUFS float64 `json:"target_lufs"`
	Format     string  `json:"format"` // "wav", "flac", "mp3" or "opus"
	PerLine    bool    `json:"per_line"`
	// Captions of the lines' words beside the scene: "" (none), "srt"
	// (SubRip) or "vtt" (WebVTT), timed from the lines' audio (app/scene).
	Captions string `json:"captions"`
	// TrimSilence cuts each take's silence at its ends (app/scene, take_audio.go)
	// so that the gap and the lines' pauses are the silence between voices.
	// New projects trim; one saved before this setting existed does not.
	TrimSilence bool `json:"trim_silence"`
}

// DefaultExport is a 0.4 s gap between voices (each take's silent ends
// trimmed), -16 LUFS (the level podcasts and spoken word are mastered to),
// WAV, one file.
func DefaultExport() ExportSettings {
	return ExportSettings{GapSeconds: 0.4, TargetLUFS: -16, Format: "wav", TrimSilence: true}
}

// MaxGapSeconds caps the gap between lines, and a line's pause after it.
const MaxGapSeconds = 10

// MaxLineGainDB caps a line's own gain in the scene, either way.
const MaxLineGainDB = 24

// The scene's formats (ExportSettings.Format) and its captions' (Captions).
const (
	CaptionsNone = ""
	CaptionsSRT  = "srt" // SubRip
	CaptionsVTT  = "vtt" // WebVTT
)

var (
	SceneFormats   = []string{"wav", "flac", "mp3", "opus"}
	CaptionFormats = []string{CaptionsNone, CaptionsSRT, CaptionsVTT}
)

// CheckSilence checks a stretch of silence in a scene, named by what (the
// gap between lines, a line's pause after it): from 0 to MaxGapSeconds.
func CheckSilence(what string, seconds float64) error {
	if math.IsNaN(seconds) || seconds < 0 || seconds > MaxGapSeconds {
		return fmt.Errorf("%s (%v s) must be from 0 to %d s", what, seconds, MaxGapSeconds)
	}
	return nil
}

// CheckCharacterName says why name cannot name a speaker
// (Project.Characters), or nil: at most MaxCharacterName bytes of UTF-8
// on one line, without spaces at its ends ("" leaves the speaker unnamed).
func CheckCharacterName(name string) error {
	switch {
	case len(name) > MaxCharacterName || !utf8.ValidString(name):
		return invalid("the name %q is longer than %d bytes or not UTF-8", clipName(name), MaxCharacterName)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return invalid("the name %q holds a control character (a line break, a tab)", clipName(name))
	case name != strings.TrimSpace(name):
		return invalid("the name %q starts or ends with a space", name)
	}
	return nil
}

// clipName is name cut to MaxCharacterName bytes, for an error.
func clipName(name string) string {
	if len(name) <= MaxCharacterName {
		return name
	}
	return strings.ToValidUTF8(name[:MaxCharacterName], "") + "…"
}

// CheckLineGain checks a line's own gain in the scene (Line.GainDB).
func CheckLineGain(db float64) error {
	if math.IsNaN(db) || db < -MaxLineGainDB || db > MaxLineGainDB {
		return fmt.Errorf("its gain (%v dB) must be from -%d to +%d dB", db, MaxLineGainDB, MaxLineGainDB)
	}
	return nil
}

// Check checks the export settings, naming the first bad one.
func (e ExportSettings) Check() error {
	if err := CheckSilence("the gap between lines", e.GapSeconds); err != nil {
		return err
	}
	if math.IsNaN(e.TargetLUFS) || e.TargetLUFS < -40 || e.TargetLUFS > -5 {
		return fmt.Errorf("the loudness target (%v LUFS) must be from -40 to -5", e.TargetLUFS)
	}
	if !slices.Contains(SceneFormats, e.Format) {
		return fmt.Errorf(`the export format %q: choose "wav", "flac", "mp3" or "opus"`, e.Format)
	}
	if !slices.Contains(CaptionFormats, e.Captions) {
		return fmt.Errorf(`the captions %q: choose "srt", "vtt" or "" (none)`, e.Captions)
	}
	return nil
}

// The kinds of this package's errors (the studio's: the HTTP status
// follows them). Each error is its own sentence; errors.Is finds its kind.
var (
	ErrInvalid  = studio.ErrInvalid  // a name or content this package refuses, or a file it cannot read
	ErrNotFound = studio.ErrNotFound // no project of that name
	ErrExists   = studio.ErrExists   // the new name is taken
)

// kindError is a sentence of its own with a kind for errors.Is.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string        { return e.msg }
func (e *kindError) Is(target error) bool { return target == e.kind }

func invalid(format string, a ...any) error { return &kindError{ErrInvalid, fmt.Sprintf(format, a...)} }

func notFound(name string) error {
	return &kindError{ErrNotFound, fmt.Sprintf("there is no project called %q", name)}
}

func taken(name string) error {
	return &kindError{ErrExists, fmt.Sprintf("a project called %q exists: choose another name", name)}
}

// CheckName says why name cannot name a project (a directory), or nil.
func CheckName(name string) error {
	bad := func(why string) error { return invalid("the name %q %s", name, why) }
	switch {
	case strings.TrimSpace(name) == "":
		return invalid("give the project a name")
	case name != strings.TrimSpace(name):
		return bad("starts or ends with a space")
	case len(name) > MaxNameBytes:
		return bad(fmt.Sprintf("is longer than %d bytes", MaxNameBytes))
	case !utf8.ValidString(name):
		return bad("is not valid UTF-8")
	case strings.HasPrefix(name, "."):
		return bad(`starts with "."`)
	case strings.ContainsAny(name, `/\`):
		return bad(`holds a "/" or "\"`)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return bad("holds a control character")
	}
	return nil
}

// Check says what is wrong with p, or nil.
func (p *Project) Check() error {
	if err := CheckName(p.Name); err != nil {
		return err
	}
	bad := invalid
	if p.Format != FormatVersion {
		return bad("format %d: this version reads format %d", p.Format, FormatVersion)
	}
	if len(p.Script) > MaxScriptBytes || !utf8.ValidString(p.Script) {
		return bad("the script is longer than %d bytes or not UTF-8", MaxScriptBytes)
	}
	if len(p.Cast) > MaxSpeakers {
		return bad("%d voices cast, at most %d", len(p.Cast), MaxSpeakers)
	}
	for i, v := range p.Cast {
		if len(v) > maxVoiceName || !utf8.ValidString(v) {
			return bad("speaker %d: the voice name is longer than %d bytes or not UTF-8", i, maxVoiceName)
		}
	}
	if len(p.Characters) > MaxSpeakers {
		return bad("%d characters named, at most %d", len(p.Characters), MaxSpeakers)
	}
	for i, c := range p.Characters {
		if err := CheckCharacterName(c); err != nil {
			return bad("speaker %d: %v", i, err)
		}
	}
	if err := p.Sampling.Validate(); err != nil {
		return bad("%v", err)
	}
	if p.MaxFrames < 0 {
		return bad("max_frames %d is negative", p.MaxFrames)
	}
	if len(p.Lines) > MaxLines {
		return bad("%d lines, at most %d", len(p.Lines), MaxLines)
	}
	if len(p.Takes) > MaxTakes {
		return bad("%d takes, at most %d", len(p.Takes), MaxTakes)
	}
	if err := checkIDs("the project's takes", p.Takes); err != nil {
		return err
	}
	for i, l := range p.Lines {
		if l.Speaker < 0 || l.Speaker >= MaxSpeakers {
			return bad("line %d: speaker %d is outside 0–%d", i+1, l.Speaker, MaxSpeakers-1)
		}
		if len(l.Takes) > MaxTakesOfLine {
			return bad("line %d: %d takes, at most %d", i+1, len(l.Takes), MaxTakesOfLine)
		}
		if err := checkIDs(fmt.Sprintf("line %d's takes", i+1), l.Takes); err != nil {
			return err
		}
		if l.Chosen != 0 && !contains(l.Takes, l.Chosen) {
			return bad("line %d: the chosen take #%d is not one of its takes", i+1, l.Chosen)
		}
		if !utf8.ValidString(l.Text) {
			return bad("line %d is not UTF-8", i+1)
		}
		if g := l.PauseAfter; g != nil {
			if err := CheckSilence("the pause after it", *g); err != nil {
				return bad("line %d: %v", i+1, err)
			}
		}
		if g := l.GainDB; g != nil {
			if err := CheckLineGain(*g); err != nil {
				return bad("line %d: %v", i+1, err)
			}
		}
	}
	if err := checkLineFileNames(p.Lines); err != nil {
		return err
	}
	if err := p.Export.Check(); err != nil {
		return bad("%v", err)
	}
	return nil
}

func checkIDs(what string, ids []int) error {
	seen := make(map[int]bool, len(ids))
	for _, id := range ids {
		if id <= 0 {
			return invalid("%s: take id %d is not positive", what, id)
		}
		if seen[id] {
			return invalid("%s: take #%d is listed twice", what, id)
		}
		seen[id] = true
	}
	return nil
}

func contains(ids []int, id int) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// New returns an empty project called name with the studio's sampling.
func New(name string, sampling api.Sampling, seed uint64, maxFrames int) Project {
	return Project{Format: FormatVersion, Name: name, Sampling: sampling, Seed: seed, MaxFrames: maxFrames, Export: DefaultExport()}
}

// Parse reads a project.json, refusing unknown fields and anything Check
// refuses.
func Parse(data []byte) (Project, error) {
	var p Project
	if len(data) > maxFileBytes {
		return p, invalid("project.json is larger than %d MiB", maxFileBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Project{}, invalid("project.json: %v", err)
	}
	if dec.More() {
		return Project{}, invalid("project.json: more data after the project")
	}
	if err := p.Check(); err != nil {
		return Project{}, err
	}
	return p, nil
}

package scene

import (
	"fmt"
	"math"
	"strings"

	"proscenium/app/projects"
	"proscenium/app/script"
)

// Captions are the scene's words as timed text, SubRip (.srt) or WebVTT
// (.vtt), for a video editor or a player: each line's words without their
// markup, cut into cues of at most two rows of 42 characters, shown while
// the line speaks (captions_timing.go). WebVTT names each cue's speaker
// with a voice span (<v Name>).

// Cue is one caption: a stretch of the scene and what is said in it.
type Cue struct {
	Start float64 `json:"start_s"` // seconds from the scene's start
	End   float64 `json:"end_s"`
	Voice string  `json:"voice,omitempty"` // who speaks it ("": not named)
	Text  string  `json:"text"`            // one or two rows, "\n" between
}

// lineCues are the cues of a line whose audio begins offset samples into
// the scene; none when the line says nothing but markup.
func lineCues(l Line, offset, rate int) []Cue {
	parts := splitCues(script.Words(l.Text))
	var cues []Cue
	for i, s := range placeCues(parts, l.PCM, rate) {
		cues = append(cues, Cue{
			Start: float64(offset+s.from) / float64(rate),
			End:   float64(offset+s.to) / float64(rate),
			Voice: l.Voice,
			Text:  cueRows(parts[i]),
		})
	}
	return cues
}

// holdShortCues keeps each cue up for minCueSeconds where the next cue
// (or the scene's end) leaves room: a word said in a quarter second is
// still read.
func holdShortCues(cues []Cue, seconds float64) {
	for i := range cues {
		until := seconds
		if i+1 < len(cues) {
			until = cues[i+1].Start
		}
		if cues[i].End-cues[i].Start < minCueSeconds {
			cues[i].End = max(cues[i].End, min(cues[i].Start+minCueSeconds, until))
		}
	}
}

// formatCaptions writes cues as SubRip (projects.CaptionsSRT) or else
// WebVTT (the export settings are checked before).
func formatCaptions(format string, cues []Cue) []byte {
	var b strings.Builder
	switch format {
	case projects.CaptionsSRT:
		for i, c := range cues {
			// SubRip has no escapes: an arrow in the text could read as a
			// timing line.
			text := strings.ReplaceAll(c.Text, "-->", "->")
			fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", i+1, timestamp(c.Start, ','), timestamp(c.End, ','), text)
		}
	default:
		b.WriteString("WEBVTT\n\n")
		for _, c := range cues {
			fmt.Fprintf(&b, "%s --> %s\n", timestamp(c.Start, '.'), timestamp(c.End, '.'))
			if c.Voice != "" {
				fmt.Fprintf(&b, "<v %s>", vttVoice(c.Voice))
			}
			fmt.Fprintf(&b, "%s\n\n", vttEscape(c.Text))
		}
	}
	return []byte(b.String())
}

// timestamp is hh:mm:ss followed by sep and milliseconds.
func timestamp(seconds float64, sep byte) string {
	ms := int64(math.Round(seconds * 1000))
	return fmt.Sprintf("%02d:%02d:%02d%c%03d", ms/3600000, ms/60000%60, ms/1000%60, sep, ms%1000)
}

// vttEscape escapes what WebVTT's cue text reads as markup.
func vttEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// vttVoice is a voice span's name on one line, its markup characters
// replaced by look-alikes: WebVTT allows escapes there, but readers such as
// ffmpeg's end the span at one.
func vttVoice(name string) string {
	return strings.NewReplacer("&", "＆", "<", "‹", ">", "›").Replace(strings.Join(strings.Fields(name), " "))
}

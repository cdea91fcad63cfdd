package script

import (
	"regexp"
	"strconv"
	"strings"
)

// Line is one line of a script: who says it (its speaker tag's number)
// and the line as written, its tag included.
type Line struct {
	Speaker int    `json:"speaker"`
	Text    string `json:"text"`
}

var (
	blankLine  = regexp.MustCompile(`\r?\n[ \t]*\r?\n`)
	speakerTag = regexp.MustCompile(`<\|speaker:(\d+)\|>`)
)

// Lines splits a script into its lines as the studio does
// (frontend/src/lib/lines.ts splitLines; testdata/lines.json holds the
// cases both are checked against): a blank line starts a line, and so does
// a speaker tag; a line without a tag keeps the speaker of the line before
// (0 at first); a tag with nothing after it only sets the speaker; empty
// lines are dropped.
func Lines(script string) []Line {
	var out []Line
	speaker := 0
	for _, para := range blankLine.Split(script, -1) {
		cuts := []int{0}
		for _, m := range speakerTag.FindAllStringIndex(para, -1) {
			cuts = append(cuts, m[0])
		}
		cuts = append(cuts, len(para))
		for i := 0; i+1 < len(cuts); i++ {
			text := strings.TrimSpace(para[cuts[i]:cuts[i+1]])
			if text == "" {
				continue
			}
			m := speakerTag.FindStringSubmatchIndex(text)
			own := m != nil && m[0] == 0
			if own {
				if n, err := strconv.Atoi(text[m[2]:m[3]]); err == nil {
					speaker = n
				}
				if strings.TrimSpace(text[m[1]:]) == "" {
					continue
				}
			}
			out = append(out, Line{Speaker: speaker, Text: text})
		}
	}
	return out
}

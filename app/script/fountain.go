package script

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	speakerTagAt     = regexp.MustCompile(`^<\|speaker:\d+\|>\s*`)
	leadingDirection = regexp.MustCompile(`^\[([^\[\]\n]*)\]\s*`)
)

// FormatFountain writes a script as a Fountain screenplay, for a
// screenwriting program and for ParseScreenplay to read back: a title
// page, then each line as its character's cue (the name in capitals;
// "SPEAKER N" for a speaker without one) with a leading [direction] as its
// parenthetical. The Narrator's lines are action paragraphs, which
// ParseScreenplay narrates again when asked to.
func FormatFountain(title string, lines []Line, characters []string) string {
	var b strings.Builder
	if title = strings.Join(strings.Fields(title), " "); title != "" {
		fmt.Fprintf(&b, "Title: %s\n\n", title)
	}
	written := 0
	for _, l := range lines {
		words := strings.Join(strings.Fields(speakerTagAt.ReplaceAllString(l.Text, "")), " ")
		if words == "" {
			continue // a tag alone says nothing
		}
		if written++; written > 1 {
			b.WriteString("\n")
		}
		name := ""
		if l.Speaker >= 0 && l.Speaker < len(characters) {
			name = characters[l.Speaker]
		}
		if characterKey(name) == characterKey(Narrator) {
			fmt.Fprintf(&b, "%s\n", actionLine(words))
			continue
		}
		fmt.Fprintf(&b, "%s\n", cueFor(name, l.Speaker))
		if m := leadingDirection.FindStringSubmatch(words); m != nil {
			fmt.Fprintf(&b, "(%s)\n", strings.TrimSpace(m[1]))
			words = words[len(m[0]):]
		}
		if words != "" {
			fmt.Fprintf(&b, "%s\n", escapeFountain(words))
		}
	}
	return b.String()
}

// cueFor is a character's cue: the name in capitals; forced with "@" as
// written where capitals cannot say it (a script without them, such as
// Chinese); "SPEAKER N" for a speaker without a name, or with one no cue
// holds.
func cueFor(name string, speaker int) string {
	name = strings.Join(strings.Fields(name), " ")
	for _, c := range []string{strings.ToUpper(name), "@" + name} {
		if got, ok := cue(c); ok && got == strings.TrimPrefix(c, "@") {
			return c
		}
	}
	return fmt.Sprintf("SPEAKER %d", speaker)
}

// actionLine is a narrator's words as an action paragraph: forced with "!"
// where Fountain would read them as something else (a heading, a cue, a
// transition, a colon's speech).
func actionLine(words string) string {
	_, isCue := cue(words)
	_, _, isSpeech := colonLine(words)
	if isCue || isSpeech || sceneHeading.MatchString(words) || transitionLine.MatchString(words) || strings.IndexAny(words, ".#=>@") == 0 {
		return "!" + escapeFountain(words)
	}
	return escapeFountain(words)
}

// escapeFountain keeps Fountain from reading a line's own marks as its
// markup: emphasis and note brackets are escaped or split.
func escapeFountain(words string) string {
	return strings.NewReplacer(`*`, `\*`, `_`, `\_`, `[[`, `[ [`, `]]`, `] ]`, `/*`, `/ *`).Replace(words)
}

// Package script owns the script as the studio reads it: its markup —
// speaker tags (<|speaker:N|>), [directions] and word tags such as
// <whisper>…</whisper> (frontend/src/lib/script.ts highlights the same) —
// its lines (lines.go), and screenplays read into it and written from it
// (screenplay.go: Fountain and "Name: speech" lines; fountain.go). The
// engine passes the markup to the model as text (docs/MODEL.md); the
// studio leaves it out where only the words count: captions (app/scene)
// and the pronunciation lexicon's matches (app/lexicon).
package script

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// markup is a token of the script's markup, never spoken as written:
// <|speaker:N|> (and any other <|…|> token), a [direction] and a word tag
// such as <whisper> or </whisper>.
var markup = regexp.MustCompile(`<\|[^|<>\n]*\|>|\[[^\[\]\n]*\]|</?[A-Za-z][\w-]*>`)

// Words is text without its markup and with every run of whitespace one
// space. A space left before punctuation by a removed token goes too
// ("Well [sighs], no" reads "Well, no").
func Words(text string) string {
	var b strings.Builder
	last := 0
	for _, m := range markup.FindAllStringIndex(text, -1) {
		b.WriteString(text[last:m[0]])
		last = m[1]
		if r, _ := utf8.DecodeRuneInString(text[last:]); strings.ContainsRune(",.;:!?…", r) {
			kept := strings.TrimRightFunc(b.String(), unicode.IsSpace)
			b.Reset()
			b.WriteString(kept)
		}
	}
	b.WriteString(text[last:])
	return strings.Join(strings.FieldsFunc(b.String(), unicode.IsSpace), " ")
}

// MapText returns text with each stretch between markup tokens replaced by
// f of it; the tokens stay as they are.
func MapText(text string, f func(string) string) string {
	var b strings.Builder
	last := 0
	for _, m := range markup.FindAllStringIndex(text, -1) {
		b.WriteString(f(text[last:m[0]]))
		b.WriteString(text[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(f(text[last:]))
	return b.String()
}

// Unspaced reports whether r belongs to a script written without spaces
// between words (Chinese, Japanese, Thai, …), or is its punctuation:
// there a word may end between any two characters.
func Unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) ||
		strings.ContainsRune("。！？、，；：「」『』（）", r)
}

// Package lexicon owns the pronunciation lexicon: words the engine is to
// say otherwise than the script writes them ("Nguyen" said as "Win",
// "SQL" as "sequel"). The studio's settings keep one lexicon; every take,
// the studio's and the speech API's, is given to the engine with it
// applied (app/takes), while the take keeps the text as written for its
// row, Re-run and captions. A match is whole words, with the case as
// written; markup (app/script) is never rewritten. A lexicon travels as a
// file (file.go): the Pronunciations panel imports and exports one, and
// `proscenium synth --lexicon` reads one, or the studio's settings file.
package lexicon

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"proscenium/app/script"
	"proscenium/engine/drama3"
)

// Entry says one word or phrase otherwise.
type Entry struct {
	Written string `json:"written"` // as the script writes it
	Spoken  string `json:"spoken"`  // what the engine is given instead
}

// Limits on a lexicon (it lives in settings.json, read whole).
const (
	MaxEntries    = 500
	MaxEntryBytes = 100
)

// Check refuses a lexicon the studio could not apply as the user means,
// naming the entry: an empty or over-long side, one on several lines,
// markup in the written side (markup is never matched), a spoken side the
// engine refuses as text, or a written side given twice.
func Check(entries []Entry) error {
	if len(entries) > MaxEntries {
		return fmt.Errorf("the pronunciation lexicon has %d entries, at most %d", len(entries), MaxEntries)
	}
	seen := make(map[string]int, len(entries))
	for i, e := range entries {
		n := i + 1
		for _, side := range []struct{ name, text string }{{"written", e.Written}, {"spoken", e.Spoken}} {
			switch {
			case !utf8.ValidString(side.text):
				return fmt.Errorf("pronunciation %d: the %s form is not UTF-8", n, side.name)
			case strings.TrimSpace(side.text) != side.text || side.text == "":
				return fmt.Errorf("pronunciation %d: the %s form %q is empty or begins or ends with a space", n, side.name, side.text)
			case len(side.text) > MaxEntryBytes:
				return fmt.Errorf("pronunciation %d: the %s form is %d bytes, at most %d", n, side.name, len(side.text), MaxEntryBytes)
			case strings.ContainsAny(side.text, "\r\n"):
				return fmt.Errorf("pronunciation %d: the %s form %q is on several lines", n, side.name, side.text)
			}
		}
		if strings.ContainsAny(e.Written, "[]<>") { // every markup token holds [ or <
			return fmt.Errorf("pronunciation %d: the written form %q holds markup ([ ] < >), which is never matched", n, e.Written)
		}
		if err := drama3.CheckStructure(e.Spoken); err != nil {
			return fmt.Errorf("pronunciation %d: the spoken form %q: %v", n, e.Spoken, err)
		}
		if j, ok := seen[e.Written]; ok {
			return fmt.Errorf("pronunciations %d and %d both say how to speak %q", j, n, e.Written)
		}
		seen[e.Written] = n
	}
	return nil
}

// Apply returns text with every whole-word match of an entry's written
// form replaced by its spoken form, the longest match first; the markup
// and the spoken forms put in are not matched again. An edge of a written
// form that is a letter or digit matches only where the text has no
// letter or digit beside it ("Ann" is not in "Anna"; "C++" ends anywhere),
// except in scripts written without spaces ("东京" is in "去东京").
func Apply(text string, entries []Entry) string {
	if len(entries) == 0 {
		return text
	}
	// The entries by their first byte, longest first (an empty written
	// form, which Check refuses, matches nothing).
	byFirst := map[byte][]Entry{}
	for _, e := range entries {
		if e.Written != "" {
			byFirst[e.Written[0]] = append(byFirst[e.Written[0]], e)
		}
	}
	for _, es := range byFirst {
		slices.SortStableFunc(es, func(a, b Entry) int { return len(b.Written) - len(a.Written) })
	}
	return script.MapText(text, func(plain string) string { return applyPlain(plain, byFirst) })
}

// applyPlain applies the entries to text without markup.
func applyPlain(text string, byFirst map[byte][]Entry) string {
	var b strings.Builder
	prev := rune(-1) // the rune before i in text
	for i := 0; i < len(text); {
		if e, ok := matchAt(text, i, prev, byFirst[text[i]]); ok {
			b.WriteString(e.Spoken)
			i += len(e.Written)
			prev, _ = utf8.DecodeLastRuneInString(e.Written)
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		b.WriteString(text[i : i+size])
		i += size
		prev = r
	}
	return b.String()
}

// matchAt is the first of entries (longest first) whose written form is
// at text[i:] as whole words, prev being the rune before i (-1: none).
func matchAt(text string, i int, prev rune, entries []Entry) (Entry, bool) {
	for _, e := range entries {
		if !strings.HasPrefix(text[i:], e.Written) {
			continue
		}
		first, _ := utf8.DecodeRuneInString(e.Written)
		last, _ := utf8.DecodeLastRuneInString(e.Written)
		after := rune(-1)
		if end := i + len(e.Written); end < len(text) {
			after, _ = utf8.DecodeRuneInString(text[end:])
		}
		if (wordRune(first) && wordRune(prev)) || (wordRune(last) && wordRune(after)) {
			continue
		}
		return e, true
	}
	return Entry{}, false
}

// wordRune reports whether r is part of a word of a script written with
// spaces (a letter, a digit or a mark): beside one, such a word goes on.
// Scripts without spaces (script.Unspaced) end a word anywhere; -1, no
// rune, is not part of a word.
func wordRune(r rune) bool {
	return r >= 0 && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)) && !script.Unspaced(r)
}

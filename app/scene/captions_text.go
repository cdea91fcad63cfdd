package scene

import (
	"slices"
	"strings"
	"unicode/utf8"

	"proscenium/app/script"
)

// Caption text is what a line says (script.Words: its markup removed,
// its whitespace one space), cut into cues a reader can take in.

// Cue text limits, as subtitle style guides set them for Latin scripts
// (two rows of at most 42 characters; counted here in code points).
const (
	rowRunes = 42
	cueRunes = 2 * rowRunes
)

// Where a cue may end, from worst to best: between any two characters
// (of a script written without spaces), between words, after a comma,
// after a clause (a semicolon, a colon, a dash), after a sentence.
const (
	cutAnywhere = iota
	cutWord
	cutComma
	cutClause
	cutSentence
	cutLevels
)

// cut is a place where a cue may end: a byte offset in the text and how
// well it ends there.
type cut struct{ at, level int }

// cutsIn gives the places in s (one-spaced words) where a cue may end, in
// order, each at its best level. A cut at a space lies before it, and the
// cue after begins past it.
func cutsIn(s string) []cut {
	var cuts []cut
	rs := []rune(s)
	at := 0
	for i, r := range rs[:max(0, len(rs)-1)] {
		at += utf8.RuneLen(r)
		next := rs[i+1]
		level := -1
		if script.Unspaced(r) || script.Unspaced(next) {
			level = cutAnywhere
		}
		switch {
		case strings.ContainsRune("。！？", r):
			level = cutSentence
		case strings.ContainsRune("、，", r):
			level = cutComma
		case strings.ContainsRune("；：", r):
			level = cutClause
		case next == ' ':
			// The mark before any closing quotes and brackets.
			j := i
			for j > 0 && strings.ContainsRune(`"'”’»)]`, rs[j]) {
				j--
			}
			switch last := rs[j]; {
			case strings.ContainsRune(".!?…", last):
				level = cutSentence
			case last == ',':
				level = cutComma
			case strings.ContainsRune(";:—–", last):
				level = cutClause
			default:
				level = cutWord
			}
		}
		if level >= 0 {
			cuts = append(cuts, cut{at, level})
		}
	}
	return cuts
}

// splitCues cuts one-spaced text into cues of at most cueRunes code
// points each (longer only where one word is): as few cues as the limit
// allows, each ended where the text pauses best (after a sentence, then a
// clause, then a comma, then between words, then between any two
// characters of a script written without spaces), and among those the
// most even. It breaks the text as TeX breaks a paragraph into lines
// (Knuth and Plass): the least total cost over every allowed end.
func splitCues(s string) []string {
	s = strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
	if s == "" {
		return nil
	}
	// The ends a cue may have: the cuts, then the text's end (the start is
	// ends[0], level unused).
	ends := append([]cut{{0, cutSentence}}, cutsIn(s)...)
	ends = append(ends, cut{len(s), cutSentence})
	// runesTo[i] counts the code points before ends[i].
	runesTo := make([]int, len(ends))
	for i := 1; i < len(ends); i++ {
		runesTo[i] = runesTo[i-1] + utf8.RuneCountInString(s[ends[i-1].at:ends[i].at])
	}
	// A cue costs far more than any break, so the fewest cues win; a worse
	// break costs more than any evenness.
	const perCue = 1 << 40
	breakCost := [cutLevels]int64{cutAnywhere: 1 << 28, cutWord: 1 << 24, cutComma: 1 << 20, cutClause: 1 << 16, cutSentence: 0}
	cost := make([]int64, len(ends))
	from := make([]int, len(ends))
	for i := 1; i < len(ends); i++ {
		cost[i] = -1
		brk := breakCost[ends[i].level]
		for j := i - 1; j >= 0; j-- {
			n := runesTo[i] - runesTo[j]
			if j > 0 && s[ends[j].at] == ' ' {
				n-- // the space the cue begins after
			}
			if n > cueRunes && j < i-1 {
				break
			}
			c := cost[j] + perCue + brk + int64(n*n)
			if cost[i] < 0 || c < cost[i] {
				cost[i], from[i] = c, j
			}
		}
	}
	var cues []string
	for i := len(ends) - 1; i > 0; i = from[i] {
		cues = append(cues, strings.TrimSpace(s[ends[from[i]].at:ends[i].at]))
	}
	slices.Reverse(cues)
	return cues
}

// cueRows breaks a cue's text into at most two rows: one when it fits
// rowRunes; else at a space that leaves both rows within it, after
// punctuation where one is near the middle, else the most even; at the
// space nearest the middle when none fits (at the middle when it has no
// space).
func cueRows(s string) string {
	rs := []rune(s)
	if len(rs) <= rowRunes {
		return s
	}
	mid := len(rs) / 2
	best, bestScore := -1, 0
	for i, r := range rs {
		if r != ' ' {
			continue
		}
		score := abs(i - mid)
		if i > rowRunes || len(rs)-i-1 > rowRunes {
			score += 4 * len(rs) // does not fit: only if nothing does
		} else if i > 0 && strings.ContainsRune(",.;:!?…—–", rs[i-1]) {
			score -= rowRunes / 4
		}
		if best < 0 || score < bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return string(rs[:mid]) + "\n" + string(rs[mid:])
	}
	return string(rs[:best]) + "\n" + string(rs[best+1:])
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// qwenPattern is the Split pre-tokeniser regex of the Qwen2/Qwen3 family.
// Tokenizers whose Split pattern is exactly this string use qwenScan, a
// hand-written scanner that FuzzQwenScannerMatchesRegex proves equal to the
// regex under a backtracking engine (regexp2); any other pattern runs through
// regexp2 itself.
const qwenPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// qwenScan appends to dst the pieces qwenPattern's successive leftmost-first
// matches cut s into. Every character is matched by some alternative, so the
// pieces cover s. s must be valid UTF-8.
//
// The alternatives, tried in order at each position, reduce to:
//  1. an apostrophe and one of s t re ve m ll d in any case;
//  2. letters, optionally led by one character that is not CR, LF, letter or
//     number;
//  3. one number character;
//  4. characters that are not space, letter or number, optionally led by one
//     U+0020, then any CR/LF;
//  5. a whitespace run that holds CR or LF, up to and including its last CR/LF;
//  6. a whitespace run, minus its last character when a non-space follows
//     (the look-ahead (?!\S) backtracks by one);
//  7. a single whitespace character (what 6 leaves over before a non-space).
func qwenScan(dst []string, s string) []string {
	for i := 0; i < len(s); {
		n := qwenMatch(s, i)
		dst = append(dst, s[i:i+n])
		i += n
	}
	return dst
}

// qwenMatch is the byte length of qwenPattern's match at s[i:].
func qwenMatch(s string, i int) int {
	c0, w0 := decodeAt(s, i)

	// 1. Contractions.
	if c0 == '\'' && i+1 < len(s) {
		if n := contractionLen(s[i+1:]); n > 0 {
			return 1 + n
		}
	}

	// 2. [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(c0) {
		return w0 + letterRun(s, i+w0)
	}
	if c0 != '\r' && c0 != '\n' && !isNumber(c0) && i+w0 < len(s) {
		if c1, w1 := decodeAt(s, i+w0); isLetter(c1) {
			return w0 + w1 + letterRun(s, i+w0+w1)
		}
	}

	// 3. \p{N}
	if isNumber(c0) {
		return w0
	}

	// 4.  ?[^\s\p{L}\p{N}]+[\r\n]*
	j := i
	if c0 == ' ' {
		j += w0
	}
	if k := otherRun(s, j); k > j {
		for k < len(s) && (s[k] == '\r' || s[k] == '\n') {
			k++
		}
		return k - i
	}

	// c0 is whitespace from here on (every other character matched above).
	end, lastNL := i, -1
	for end < len(s) {
		c, w := decodeAt(s, end)
		if !isSpace(c) {
			break
		}
		if c == '\r' || c == '\n' {
			lastNL = end
		}
		end += w
	}
	// 5. \s*[\r\n]+
	if lastNL >= 0 {
		return lastNL + 1 - i
	}
	// 6. \s+(?!\S)
	if end == len(s) {
		return end - i
	}
	_, lastW := utf8.DecodeLastRuneInString(s[:end])
	if end-lastW > i {
		return end - lastW - i
	}
	// 7. \s+ (a single whitespace character before a non-space)
	return end - i
}

// contractionLen matches (?i:s|t|re|ve|m|ll|d) at the start of s (the part
// after the apostrophe) and returns its byte length, or 0.
func contractionLen(s string) int {
	c0, w0 := decodeAt(s, 0)
	switch foldASCII(c0) {
	case 's', 't', 'm', 'd':
		return w0
	case 'r', 'v':
		if len(s) > w0 {
			if c1, w1 := decodeAt(s, w0); foldASCII(c1) == 'e' {
				return w0 + w1
			}
		}
	case 'l':
		if len(s) > w0 {
			if c1, w1 := decodeAt(s, w0); foldASCII(c1) == 'l' {
				return w0 + w1
			}
		}
	}
	return 0
}

// foldASCII case-folds the contraction letters as Oniguruma's (?i) does
// (Unicode case folding): ASCII upper case, and U+017F LATIN SMALL LETTER LONG
// S, which folds to s. No other character folds to one of s t r e v m l d.
// (regexp2 does not fold U+017F; the fuzz test accounts for that.)
func foldASCII(c rune) rune {
	switch {
	case c >= 'A' && c <= 'Z':
		return c + ('a' - 'A')
	case c == 0x17F:
		return 's'
	}
	return c
}

func letterRun(s string, i int) int {
	j := i
	for j < len(s) {
		c, w := decodeAt(s, j)
		if !isLetter(c) {
			break
		}
		j += w
	}
	return j - i
}

// otherRun returns the end of the run of characters that are neither
// whitespace, letter nor number starting at i.
func otherRun(s string, i int) int {
	for i < len(s) {
		c, w := decodeAt(s, i)
		if isSpace(c) || isLetter(c) || isNumber(c) {
			break
		}
		i += w
	}
	return i
}

func decodeAt(s string, i int) (rune, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// asciiClass caches the three classes for ASCII characters.
var asciiClass [128]uint8

const (
	classLetter = 1 << iota
	classNumber
	classSpace
)

func init() {
	for c := rune(0); c < 128; c++ {
		var k uint8
		if unicode.IsLetter(c) {
			k |= classLetter
		}
		if unicode.IsNumber(c) {
			k |= classNumber
		}
		if unicode.IsSpace(c) {
			k |= classSpace
		}
		asciiClass[c] = k
	}
}

// isLetter is \p{L}.
func isLetter(c rune) bool {
	if c < 128 {
		return asciiClass[c]&classLetter != 0
	}
	return unicode.IsLetter(c)
}

// isNumber is \p{N}.
func isNumber(c rune) bool {
	if c < 128 {
		return asciiClass[c]&classNumber != 0
	}
	return unicode.IsNumber(c)
}

// isSpace is \s: the Unicode White_Space property, which is what both
// Oniguruma (HF tokenizers) and regexp2 use for \s.
func isSpace(c rune) bool {
	if c < 128 {
		return asciiClass[c]&classSpace != 0
	}
	return unicode.IsSpace(c)
}

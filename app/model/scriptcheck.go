package model

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"proscenium/app/settings"
	"proscenium/app/studio"
	"proscenium/engine/api"
	"proscenium/engine/drama3"
)

// ScriptCheck is what the editor shows before Speak: the script counted as
// the servers count it, and every place the engine would refuse.
type ScriptCheck struct {
	// Chars is the script's length in Unicode characters (code points):
	// what the speech API's input limit counts.
	Chars int `json:"chars"`
	// Bytes is the spoken text's UTF-8 size after trimming surrounding
	// whitespace: what the engine's text limit (MaxBytes) counts.
	Bytes    int `json:"bytes"`
	MaxBytes int `json:"max_bytes"`
	// Tokenizer says whether the loaded model's tokenizer took part (it
	// also finds added tokens such as <|endoftext|>).
	Tokenizer bool            `json:"tokenizer"`
	Problems  []ScriptProblem `json:"problems"`
}

// ScriptProblem is one refusal. Start and End are offsets in UTF-16 code
// units (a JavaScript string's indices), -1 when the problem is the whole
// script (too long, empty).
type ScriptProblem struct {
	Start  int    `json:"start"`
	End    int    `json:"end"`
	Token  string `json:"token"`
	Reason string `json:"reason"`
}

// maxScriptProblems bounds the list (a pasted chat log could hold thousands).
const maxScriptProblems = 50

// CheckScript applies the engine's prompt rules (engine/drama3: structural
// tokens, speaker tags, size) to a script without speaking it. With a model
// loaded its tokenizer finds every added token as well.
func (c *Control) CheckScript(text string) (ScriptCheck, error) {
	if err := settings.ValidateScript(text); err != nil {
		return ScriptCheck{}, err
	}
	body := strings.TrimFunc(text, unicode.IsSpace)
	chk := ScriptCheck{Chars: utf8.RuneCountInString(text), Bytes: len(body), MaxBytes: drama3.DefaultMaxTextBytes, Problems: []ScriptProblem{}}
	check := drama3.CheckStructure
	if eng, err := c.Loaded(); err == nil {
		if tc, ok := eng.(api.TextChecker); ok {
			chk.Tokenizer = true
			check = tc.CheckText
		}
	}
	if body == "" {
		return chk, nil // nothing to flag; Speak says the script is empty
	}
	if chk.Bytes > chk.MaxBytes {
		chk.Problems = append(chk.Problems, ScriptProblem{Start: -1, End: -1,
			Reason: "longer than one take reads: " + studio.ByteSize(int64(chk.Bytes)) + " of at most " + studio.ByteSize(int64(chk.MaxBytes))})
		return chk, nil
	}
	// Each refusal names one place; check again after it to find the next.
	for from := 0; from < len(text) && len(chk.Problems) < maxScriptProblems; {
		var te *drama3.TextError
		err := check(text[from:])
		if err != nil && !errors.As(err, &te) && chk.Tokenizer {
			// The engine could not check (a worker that died or timed
			// out): check the structure alone rather than call the script
			// clean, and say so.
			chk.Tokenizer, check = false, drama3.CheckStructure
			continue
		}
		if err == nil || te == nil || te.Offset < 0 {
			break
		}
		at := from + te.Offset
		end := min(at+max(len(te.Token), 2), len(text))
		chk.Problems = append(chk.Problems, ScriptProblem{Start: utf16Len(text[:at]), End: utf16Len(text[:end]), Token: te.Token, Reason: te.Reason})
		from = end
	}
	return chk, nil
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

package lexicon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"proscenium/app/internal/files"
	"proscenium/internal/jsonerr"
)

// MaxFileBytes bounds a lexicon file: more than the largest settings file
// (its script and its lexicon, app/settings), and what the browser's
// studio sends in one request with room for JSON's escapes.
const MaxFileBytes = 512 << 10

// Parse reads a lexicon file: a JSON array of pronunciations
// ([{"written": "SQL", "spoken": "sequel"}]), or an object whose
// "lexicon" is one, such as the studio's settings.json, so that the
// command line speaks as the studio does. The lexicon is checked (Check).
func Parse(data []byte) ([]Entry, error) {
	data = bytes.TrimSpace(data)
	var entries []Entry
	switch {
	case len(data) == 0:
		return nil, errors.New("it is empty; give a JSON array of pronunciations, or a settings file")
	case data[0] == '[':
		if err := files.DecodeStrict(data, &entries); err != nil {
			return nil, fmt.Errorf("not a JSON array of pronunciations ({\"written\": …, \"spoken\": …}): %v", err)
		}
	case data[0] == '{':
		var wrapped struct {
			Lexicon *[]Entry `json:"lexicon"`
		}
		if err := json.Unmarshal(data, &wrapped); err != nil {
			return nil, fmt.Errorf("not a JSON object with a lexicon: %v", jsonerr.Phrase(err))
		}
		if wrapped.Lexicon == nil {
			return nil, errors.New("its object has no \"lexicon\" (a settings file keeps its pronunciations there)")
		}
		entries = *wrapped.Lexicon
	default:
		return nil, errors.New("not JSON: give an array of pronunciations, or a settings file")
	}
	if err := Check(entries); err != nil {
		return nil, err
	}
	return entries, nil
}

// Marshal is entries as a lexicon file: a JSON array of pronunciations,
// one to a line, that Parse reads back.
func Marshal(entries []Entry) []byte {
	var b bytes.Buffer
	b.WriteString("[")
	for i, e := range entries {
		if i > 0 {
			b.WriteString(",")
		}
		line, _ := json.Marshal(e) // two strings: cannot fail
		b.WriteString("\n  ")
		b.Write(line)
	}
	if len(entries) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("]\n")
	return b.Bytes()
}

// ReadFile reads and checks the lexicon file at path (Parse); its error
// names the file.
func ReadFile(path string) ([]Entry, error) {
	data, err := files.ReadCapped(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	entries, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("the lexicon %s: %w", path, err)
	}
	return entries, nil
}

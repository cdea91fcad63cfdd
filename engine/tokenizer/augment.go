package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// WithAddedTokens returns baseJSON (a tokenizer.json) with tokens appended to
// added_tokens as special tokens with fresh ids, in order, after the largest id
// in use. Every other byte of the file is kept; the new entries are written in
// HF's pretty layout. The base must parse, and no token may be empty, repeat,
// or already be an added token or a vocabulary symbol. The result is a
// deterministic function of the inputs.
func WithAddedTokens(baseJSON []byte, tokens []string) ([]byte, error) {
	seen := make(map[string]int, len(tokens))
	for i, s := range tokens {
		if s == "" {
			return nil, fmt.Errorf("token %d is empty", i)
		}
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("token %d %q is not valid UTF-8", i, s)
		}
		if j, dup := seen[s]; dup {
			return nil, fmt.Errorf("token %d %q repeats token %d", i, s, j)
		}
		seen[s] = i
	}
	base, err := Parse(baseJSON)
	if err != nil {
		return nil, fmt.Errorf("base tokenizer.json: %w", err)
	}
	for i, s := range tokens {
		if id, ok := base.TokenID(s); ok {
			return nil, fmt.Errorf("token %d %q is already in the tokenizer (id %d)", i, s, id)
		}
	}
	insertAt, empty, err := addedTokensEnd(baseJSON)
	if err != nil {
		return nil, err
	}
	var entries bytes.Buffer
	next := base.VocabSize()
	for i, s := range tokens {
		if i > 0 || !empty {
			entries.WriteByte(',')
		}
		content, err := marshalNoEscape(s)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&entries, "\n    {\n      \"id\": %s,\n      \"content\": %s,\n"+
			"      \"single_word\": false,\n      \"lstrip\": false,\n      \"rstrip\": false,\n"+
			"      \"normalized\": false,\n      \"special\": true\n    }",
			strconv.Itoa(next+i), content)
	}
	out := make([]byte, 0, len(baseJSON)+entries.Len())
	out = append(out, baseJSON[:insertAt]...)
	out = append(out, entries.Bytes()...)
	out = append(out, baseJSON[insertAt:]...)
	return out, nil
}

// addedTokensEnd finds, in a tokenizer.json, the offset just after the last
// entry of the top-level added_tokens array (just after its '[' when empty).
func addedTokensEnd(data []byte) (offset int, empty bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return 0, false, fmt.Errorf("tokenizer.json is not a JSON object")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, false, fmt.Errorf("tokenizer.json: %v", err)
		}
		if key != "added_tokens" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return 0, false, fmt.Errorf("tokenizer.json key %v: %v", key, err)
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return 0, false, fmt.Errorf("tokenizer.json: added_tokens is not an array")
		}
		offset, empty = int(dec.InputOffset()), true
		for dec.More() {
			var entry json.RawMessage
			if err := dec.Decode(&entry); err != nil {
				return 0, false, fmt.Errorf("tokenizer.json added_tokens: %v", err)
			}
			offset, empty = int(dec.InputOffset()), false
		}
		return offset, empty, nil
	}
	return 0, false, fmt.Errorf("tokenizer.json has no added_tokens array")
}

// marshalNoEscape writes s as a JSON string without HF-foreign escapes of
// '<', '>' and '&'.
func marshalNoEscape(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

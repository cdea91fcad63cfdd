package jsonerr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// decode decodes one value, unknown fields refused, its error phrased.
func decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return Phrase(dec.Decode(v))
}

// Decoding errors in a reader's words: where a syntax error is and no byte
// of the input, what a field must be and what it got.
func TestPhrase(t *testing.T) {
	type inner struct {
		Temperature float32 `json:"temperature"`
	}
	type doc struct {
		Name    string `json:"name"`
		Seed    uint64 `json:"seed"`
		Frames  int    `json:"frames"`
		Stream  bool   `json:"stream"`
		Tags    []string
		Inner   inner `json:"sampling"`
		Pointer *int  `json:"pointer"`
	}
	for _, c := range []struct{ in, want string }{
		{`hunter2-password`, "not valid JSON (at byte 1)"},
		{`{"name": "a",}`, "not valid JSON (at byte 14)"},
		{``, "empty or cut short: a JSON value is required"},
		{`{"name": `, "empty or cut short: a JSON value is required"},
		{`{"name": 7}`, `field "name" must be a string, got a number`},
		{`{"seed": -4}`, `field "seed" must be a whole number ≥ 0, got a number -4`},
		{`{"frames": 1.5}`, `field "frames" must be a whole number, got a number 1.5`},
		{`{"stream": "yes"}`, `field "stream" must be true or false, got a string`},
		{`{"Tags": {}}`, `field "Tags" must be an array, got an object`},
		{`{"sampling": {"temperature": true}}`, `field "sampling.temperature" must be a number, got a boolean`},
		{`{"sampling": []}`, `field "sampling" must be an object, got an array`},
		{`{"pointer": "x"}`, `field "pointer" must be a whole number, got a string`},
		{`"text"`, "the value must be an object, got a string"},
		{`{"colour": 1}`, `json: unknown field "colour"`},
	} {
		var d doc
		err := decode([]byte(c.in), &d)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter") {
			t.Errorf("%s: the error quotes the input: %v", c.in, err)
		}
	}
}

// A reader's own words around the decoding error stay in front of it; a
// wrapped syntax error still quotes nothing.
func TestPhraseKeepsTheContext(t *testing.T) {
	var m map[string]string
	typ := json.Unmarshal([]byte(`{"a": 1}`), &m)
	if got := Phrase(fmt.Errorf("__metadata__ must map strings to strings: %w", typ)).Error(); got != `__metadata__ must map strings to strings: field "a" must be a string, got a number` {
		t.Errorf("wrapped type error: %q", got)
	}
	syn := json.Unmarshal([]byte(`hunter2`), &m)
	if got := Phrase(fmt.Errorf("header: %w", syn)).Error(); got != "header: not valid JSON (at byte 1)" {
		t.Errorf("wrapped syntax error: %q", got)
	}
	if got := Phrase(fmt.Errorf("%w (read from hunter2)", syn)).Error(); got != "not valid JSON (at byte 1)" {
		t.Errorf("syntax error not at the end: %q", got)
	}
}

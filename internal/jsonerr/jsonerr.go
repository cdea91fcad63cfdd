// Package jsonerr says an encoding/json decoding error in the words of
// whoever wrote the file or request — the one phrasing of the engine's
// checkpoint readers and the studio's files and requests.
package jsonerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Phrase is an encoding/json decoding error in the words of whoever
// wrote the file or request: where a syntax error is, without quoting a byte
// of the input (a file that is no JSON at all may be anything: a secret
// behind a mistaken path); what a field must be and what it got ("field
// "temperature" must be a number, got a string", not "cannot unmarshal
// string into Go struct field … of type float32"). What a reader wrapped
// around the decoding error ("__metadata__ must map strings to strings: …")
// stays in front of it. Other errors pass as they are.
func Phrase(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return inContext(err, syn, fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset))
	case errors.As(err, &typ):
		what := "the value"
		if typ.Field != "" {
			what = fmt.Sprintf("field %q", typ.Field)
		}
		return inContext(err, typ, fmt.Sprintf("%s must be %s, got %s", what, jsonKind(typ.Type), valueKind(typ.Value)))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("empty or cut short: a JSON value is required")
	}
	return err
}

// inContext is phrased in place of inner at the end of err's message: err's
// own words before it are kept. Where inner's text is not err's last words,
// phrased alone (never inner's text: a syntax error quotes the input).
func inContext(err, inner error, phrased string) error {
	if prefix, ok := strings.CutSuffix(err.Error(), inner.Error()); ok {
		return errors.New(prefix + phrased)
	}
	return errors.New(phrased)
}

// jsonKind names the JSON value that decodes into t.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number ≥ 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a " + t.String()
}

// valueKind is encoding/json's name of what it found ("string", "number",
// "number 1.5", "bool", "array", "object") as a phrase.
func valueKind(v string) string {
	switch v {
	case "":
		return "another kind of value"
	case "array", "object":
		return "an " + v
	case "bool":
		return "a boolean"
	}
	return "a " + v
}

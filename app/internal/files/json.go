package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
)

// JSONProblem is an encoding/json decoding error in the words of whoever
// wrote the file or request: where a syntax error is, without quoting a byte
// of the input (a file that is no JSON at all may be anything: a secret
// behind a mistaken path); what a field must be and what it got ("field
// "temperature" must be a number, got a string", not "cannot unmarshal
// string into Go struct field … of type float32"). Other errors pass as
// they are.
func JSONProblem(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ):
		what := "the value"
		if typ.Field != "" {
			what = fmt.Sprintf("field %q", typ.Field)
		}
		return fmt.Errorf("%s must be %s, got %s", what, jsonKind(typ.Type), valueKind(typ.Value))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("empty or cut short: a JSON value is required")
	}
	return err
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

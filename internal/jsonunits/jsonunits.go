// Package jsonunits checks that the JSON the program emits says its units:
// a quantity's field name ends with its unit (time_to_first_audio_ms,
// elapsed_s, used_bytes, load_gb_per_s, sample_rate_hz) and its value is in
// that unit, never time.Duration's bare nanoseconds. Tests of the packages
// that emit JSON (the CLI, the bench tools, the studio's API and events, the
// worker protocol) walk their types with Check.
package jsonunits

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"
)

// unitSuffixes end the names of quantities.
var unitSuffixes = []string{
	"_ms", "_us", "_s", // durations
	"_bytes",        // sizes
	"_per_s", "_hz", // rates
	"_x_realtime",           // audio seconds per second
	"_db", "_lufs", "_dbtp", // levels: gain, loudness, true peak
}

// unitless are the names (the whole JSON name, or its last word after '_')
// of numbers that are counts, indices, identifiers, ratios or settings: they
// have no unit to say. Keep it short; a quantity belongs in unitSuffixes.
var unitless = []string{
	"bytes", "ms", // the unit is the whole name (export's bytes written, a stage's ms)
	// identifiers, indices and positions
	"id", "ids", "pid", "handle", "ordinal", "start", "end", "offset", "port", "status",
	"protocol", "format", "pass", "seed", "codes", "speaker", "sample", "cc_major", "cc_minor", "driver_version",
	"batch", "group", // a take's batch and variation group (ids)
	// counts of things
	"count", "frames", "frame", "samples", "tokens", "rows", "steps", "takes", "chunks", "repeats", "tensors", "passes",
	"elements", "parameters", "layers", "hidden", "experts", "codebooks", "multiprocessors", "underruns",
	"chars", "channels", "entries", "hits", "misses", "evictions", "refusals", "lines", "launches",
	// ratios and sampler settings
	"factor", "share", "volume", "temperature", "top_p", "top_k", "speed", "values", "peaks",
}

// Problem is one field that does not say its unit.
type Problem struct {
	Path string // Type.json_name[.json_name…]
	Why  string
}

func (p Problem) String() string { return p.Path + ": " + p.Why }

var durationType = reflect.TypeOf(time.Duration(0))

// Check walks the JSON-tagged fields of types (structs, pointers, slices and
// maps of them) and returns every time.Duration field and every numeric
// field whose name neither ends with a unit nor is unitless. allow names
// further exceptions as "Type.json_name" or "Type.*" (the struct's Go
// name), each with a reason at the caller.
func Check(allow []string, types ...any) []Problem {
	c := checker{seen: map[reflect.Type]bool{}, allow: allow}
	for _, v := range types {
		t, ok := v.(reflect.Type)
		if !ok {
			t = reflect.TypeOf(v)
		}
		c.walk(t, t.String())
	}
	sort.Slice(c.problems, func(i, j int) bool { return c.problems[i].Path < c.problems[j].Path })
	return c.problems
}

type checker struct {
	seen     map[reflect.Type]bool
	allow    []string
	problems []Problem
}

func (c *checker) walk(t reflect.Type, path string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || c.seen[t] {
		return
	}
	c.seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			c.walk(f.Type, path)
			continue
		}
		if name == "" {
			name = f.Name
		}
		fpath := path + "." + name
		elem := f.Type
		for elem.Kind() == reflect.Pointer || elem.Kind() == reflect.Slice || elem.Kind() == reflect.Array || elem.Kind() == reflect.Map {
			elem = elem.Elem()
		}
		switch {
		case elem == durationType:
			c.problems = append(c.problems, Problem{fpath, "a time.Duration crosses as bare nanoseconds: a float64 named _ms or _s"})
		case isNumber(elem.Kind()) && !(f.Type.Kind() == reflect.Slice && elem.Kind() == reflect.Uint8): // []byte is base64 text
			if !saysUnit(name) && !slices.Contains(c.allow, t.Name()+"."+name) && !slices.Contains(c.allow, t.Name()+".*") {
				c.problems = append(c.problems, Problem{fpath, fmt.Sprintf("a %s without a unit in its name (%s) and not a unitless count", f.Type, strings.Join(unitSuffixes, ", "))})
			}
		default:
			c.walk(f.Type, fpath)
		}
	}
}

// saysUnit is whether a number's JSON name ends with a unit or names a
// unitless count, index or ratio.
func saysUnit(name string) bool {
	for _, s := range unitSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	if slices.Contains(unitless, name) {
		return true
	}
	if i := strings.LastIndexByte(name, '_'); i >= 0 && slices.Contains(unitless, name[i+1:]) {
		return true
	}
	return false
}

// CheckDecoded walks JSON text (an object, or an array of them) and returns
// every number whose key does not say its unit and is not in allow: for
// replies built from maps (the speech API's events) that have no type to
// walk.
func CheckDecoded(data []byte, allow ...string) ([]Problem, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	var problems []Problem
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if _, num := x.(float64); num && !saysUnit(k) && !slices.Contains(allow, k) {
					problems = append(problems, Problem{path + "." + k, "a number without a unit in its name"})
				}
				walk(x, path+"."+k)
			}
		case []any:
			for _, x := range v {
				walk(x, path+"[]")
			}
		}
	}
	walk(v, "$")
	sort.Slice(problems, func(i, j int) bool { return problems[i].Path < problems[j].Path })
	return problems, nil
}

func isNumber(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

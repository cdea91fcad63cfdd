package lexicon

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	sql := []Entry{{Written: "SQL", Spoken: "sequel"}}
	for _, tc := range []struct {
		name, data string
		want       []Entry
		err        string // in the error; "" for none
	}{
		{"an array", `[{"written": "SQL", "spoken": "sequel"}]`, sql, ""},
		{"an empty array", ` [] `, []Entry{}, ""},
		{"a settings file", `{"script": "Hello.", "seed": 7, "lexicon": [{"written": "SQL", "spoken": "sequel"}]}`, sql, ""},
		{"a settings file with no pronunciations", `{"lexicon": []}`, []Entry{}, ""},
		{"empty", "  \n", nil, "it is empty"},
		{"not JSON", "SQL = sequel", nil, "not JSON"},
		{"an unknown field", `[{"written": "SQL", "said": "sequel"}]`, nil, `"said"`},
		{"two values", `[] []`, nil, "after the JSON value"},
		{"an object without a lexicon", `{"script": "Hello."}`, nil, `no "lexicon"`},
		{"a lexicon that is no array", `{"lexicon": {"SQL": "sequel"}}`, nil, "not a JSON object with a lexicon"},
		{"a bad pronunciation", `[{"written": "[calm]", "spoken": "x"}]`, nil, "pronunciation 1: the written form"},
		{"a word given twice", `[{"written": "SQL", "spoken": "a"}, {"written": "SQL", "spoken": "b"}]`, nil, "pronunciations 1 and 2"},
		{"broken JSON", `[{"written": "SQL"`, nil, "not a JSON array"},
	} {
		got, err := Parse([]byte(tc.data))
		switch {
		case tc.err == "" && (err != nil || !reflect.DeepEqual(got, tc.want)):
			t.Errorf("%s: Parse = %v, %v; want %v", tc.name, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: Parse = %v, %v; want an error with %q", tc.name, got, err, tc.err)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "lexicon.json")
	if err := os.WriteFile(path, []byte(`[{"written": "Nguyen", "spoken": "Win"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadFile(path); err != nil || len(got) != 1 || got[0].Spoken != "Win" {
		t.Errorf("ReadFile = %v, %v", got, err)
	}
	if err := os.WriteFile(path, []byte(`[{"written": "", "spoken": "Win"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("a bad lexicon: %v, want an error naming %s", err, path)
	}
	for _, bad := range []string{filepath.Join(dir, "missing.json"), dir} {
		if _, err := ReadFile(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("ReadFile(%s) = %v, want an error naming it", bad, err)
		}
	}
}

// TestMarshal: a lexicon file as the studio writes it, one pronunciation
// to a line, reads back as it was.
func TestMarshal(t *testing.T) {
	lex := []Entry{{Written: "SQL", Spoken: "sequel"}, {Written: `"Quoted"`, Spoken: "东京 <b>"}}
	got := string(Marshal(lex))
	want := "[\n  {\"written\":\"SQL\",\"spoken\":\"sequel\"},\n  {\"written\":\"\\\"Quoted\\\"\",\"spoken\":\"东京 \\u003cb\\u003e\"}\n]\n"
	if got != want {
		t.Errorf("Marshal = %q, want %q", got, want)
	}
	for _, l := range [][]Entry{lex, {}} {
		if back, err := Parse(Marshal(l)); err != nil || !slices.Equal(back, l) {
			t.Errorf("%v reads back as %v, %v", l, back, err)
		}
	}
}

// FuzzParse: any bytes give a checked lexicon or an error, never a panic;
// a lexicon read is one Marshal writes back as it was.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`[{"written": "SQL", "spoken": "sequel"}]`))
	f.Add([]byte(`{"lexicon": [{"written": "东京", "spoken": "Tokyo"}]}`))
	f.Add([]byte(`{"lexicon": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse(data)
		if err != nil {
			return
		}
		if Check(entries) != nil {
			t.Fatalf("Parse(%q) gave a lexicon Check refuses: %v", data, entries)
		}
		if again, err := Parse(Marshal(entries)); err != nil || !slices.Equal(again, entries) {
			t.Fatalf("Marshal(%v) reads back as %v, %v", entries, again, err)
		}
	})
}

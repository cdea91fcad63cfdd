package projects

import (
	"errors"
	"strings"
	"testing"

	"proscenium/engine/api"
)

func TestCheckLineFileName(t *testing.T) {
	for _, ok := range []string{"guard_greets_03", "Act 1 - Bea (take 2)", "東京-01", "v1.2", "con-trol", "console"} {
		if err := CheckLineFileName(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for name, says := range map[string]string{
		"":                      "empty",
		" padded":               "space",
		".hidden":               `"."`,
		"trailing.":             `"."`,
		"a/b":                   "/ \\ :",
		`a\b`:                   "/ \\ :",
		"what?":                 "some file systems refuse",
		"tab\there":             "control character",
		"CON":                   "device name",
		"lpt1.take":             "device name",
		"\xff":                  "UTF-8",
		strings.Repeat("x", 81): "longer than 80",
		strings.Repeat("é", 41): "longer than 80",
	} {
		err := CheckLineFileName(name)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), says) {
			t.Errorf("%q: %v, want an invalid name saying %q", name, err, says)
		}
	}
}

// TestProjectLineFileNames: a project refuses a bad line file name, and
// two lines naming the same file in any case, by line number.
func TestProjectLineFileNames(t *testing.T) {
	p := New("Names", api.DefaultSampling(), 0, 0)
	p.Lines = []Line{{Text: "a", FileName: "intro_01"}, {Text: "b"}, {Text: "c", FileName: "intro_02"}}
	if err := p.Check(); err != nil {
		t.Fatal(err)
	}
	p.Lines[2].FileName = "Intro_01"
	if err := p.Check(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `lines 1 and 3 both name their file "Intro_01"`) {
		t.Errorf("the same name twice: %v", err)
	}
	p.Lines[2].FileName = "intro:02"
	if err := p.Check(); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "line 3: the file name") {
		t.Errorf("a bad name: %v", err)
	}
}

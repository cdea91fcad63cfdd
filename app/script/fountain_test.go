package script

import (
	"fmt"
	"strings"
	"testing"
)

func TestFormatFountain(t *testing.T) {
	lines := []Line{
		{0, "<|speaker:0|>The clock strikes twelve."},
		{1, "<|speaker:1|>[whispering] Did you *hear* that?"},
		{2, "<|speaker:2|>Only the clock."},
		{3, "<|speaker:3|>你好。"},
		{4, "<|speaker:4|>Who am I?"},
		{0, "<|speaker:0|>INT. A line that looks like a heading."},
		{0, "<|speaker:0|>  "}, // nothing said: no line
		{1, ""},
	}
	got := FormatFountain("Night  Shift", lines, []string{"Narrator", "Bea", "Dr. Ben Okafor", "张三"})
	want := "Title: Night Shift\n\n" +
		"The clock strikes twelve.\n\n" +
		"BEA\n(whispering)\nDid you \\*hear\\* that?\n\n" +
		"DR. BEN OKAFOR\nOnly the clock.\n\n" +
		"@张三\n你好。\n\n" +
		"SPEAKER 4\nWho am I?\n\n" +
		"!INT. A line that looks like a heading.\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// A screenplay written out and read again is the same script: the same
// speeches by the same characters (their names in capitals, as cues are),
// the narration narrated again. (Only the blank lines between scenes go:
// a project's lines do not keep them.)
func TestFountainRoundTrip(t *testing.T) {
	for _, in := range []string{
		fountainSample,
		"Anna (quietly): I know.\nDr. Ben Okafor: (sighs) Fine, *really*.\nAnna: snake_case and 2 * 3 = 6 [[not a note]] /* nor this */",
		"张三：你好。\n李四：再见。",
		"INT. HALL\n\nThe clock strikes.\n\nANNA\nMidnight.\n\nBen: Already? CUT TO:",
	} {
		for _, narrate := range []bool{false, true} {
			first, err := ParseScreenplay(in, ScreenplayOptions{Narrate: narrate})
			if err != nil {
				t.Fatal(err)
			}
			names := make([]string, len(first.Characters))
			for i, c := range first.Characters {
				names[i] = c.Name
			}
			out := FormatFountain("Round trip", Lines(first.Script), names)
			again, err := ParseScreenplay(out, ScreenplayOptions{Narrate: narrate})
			if err != nil {
				t.Fatalf("%q written as\n%s\nis refused: %v", in, out, err)
			}
			if again.Script != strings.ReplaceAll(first.Script, "\n\n", "\n") || len(again.Characters) != len(first.Characters) {
				t.Errorf("%q (narrate %v) written as\n%s\nreads back as\n%q\nnot\n%q", in, narrate, out, again.Script, first.Script)
			}
			for i, c := range again.Characters {
				if characterKey(c.Name) != characterKey(names[i]) || c.Lines != first.Characters[i].Lines {
					t.Errorf("character %d: %+v, was %+v", i, c, first.Characters[i])
				}
			}
		}
	}
}

func ExampleFormatFountain() {
	fmt.Print(FormatFountain("Act one", []Line{{0, "<|speaker:0|>[calm] Hello."}, {1, "<|speaker:1|>Hi."}}, []string{"Anna"}))
	// Output:
	// Title: Act one
	//
	// ANNA
	// (calm)
	// Hello.
	//
	// SPEAKER 1
	// Hi.
}

package script

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

const fountainSample = `Title: The Lighthouse
Author: R. Keeper
Draft date: 1 May

INT. LIGHTHOUSE - NIGHT

Rain on the glass. ANNA climbs the stairs.

ANNA
Is anyone up here?

BEN (V.O.)
(whispering)
Only me.
And the *lamp*, as **always**.

[[Ben's line may go.]]

/* A cut scene
BEN
Gone.
*/

CUT TO:

EXT. ROCKS - DAY

ANNA (CONT'D) ^
You frighten me, _Ben_.

@McCoy
~Row, row, row your boat.

===

BEN
(beat)
Good.
`

func TestParseScreenplayFountain(t *testing.T) {
	got, err := ParseScreenplay(fountainSample, ScreenplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|speaker:0|>Is anyone up here?\n" +
		"<|speaker:1|>[whispering] Only me. And the lamp, as always.\n" +
		"\n<|speaker:0|>You frighten me, Ben.\n" +
		"<|speaker:2|>Row, row, row your boat.\n" +
		"<|speaker:1|>[beat] Good."
	if got.Script != want {
		t.Errorf("script:\n%s\nwant:\n%s", got.Script, want)
	}
	wantChars := []Character{{"ANNA", 2}, {"BEN", 2}, {"McCoy", 1}}
	if fmt.Sprint(got.Characters) != fmt.Sprint(wantChars) || got.Lines != 5 {
		t.Errorf("characters %v, %d lines; want %v, 5", got.Characters, got.Lines, wantChars)
	}
	wantLeft := []LeftOut{{"title page", 1}, {"scene headings", 2}, {"transitions", 1}, {"action paragraphs", 1}, {"notes", 1}, {"boneyard passages", 1}, {"page breaks", 1}}
	if fmt.Sprint(got.LeftOut) != fmt.Sprint(wantLeft) {
		t.Errorf("left out %v, want %v", got.LeftOut, wantLeft)
	}
}

func TestParseScreenplayColons(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		chars          []Character
	}{
		{"speeches a line each", "Anna: Where were you?\nBen: Out.\nAnna: Out where?",
			"<|speaker:0|>Where were you?\n<|speaker:1|>Out.\n<|speaker:0|>Out where?", []Character{{"Anna", 2}, {"Ben", 1}}},
		{"a direction after the name or before the words", "Anna (quietly): I know.\nDr. Ben Okafor: (sighs) Fine.\nAnna (V.O.): Good.",
			"<|speaker:0|>[quietly] I know.\n<|speaker:1|>[sighs] Fine.\n<|speaker:0|>Good.", []Character{{"Anna", 2}, {"Dr. Ben Okafor", 1}}},
		{"a speech over several lines, and running text's colons", "Anna:\nAt 10:30 we left,\nsee http://x.org\nBEN: and?",
			"<|speaker:0|>At 10:30 we left, see http://x.org\n<|speaker:1|>and?", []Character{{"Anna", 1}, {"BEN", 1}}},
		{"full-width colons", "张三：你好。\n李四：再见。", "<|speaker:0|>你好。\n<|speaker:1|>再见。", []Character{{"张三", 1}, {"李四", 1}}},
		{"a name of five words is not a name", "Then the five of them said: nothing.\n\nAnna: Hm.", "<|speaker:0|>Hm.", []Character{{"Anna", 1}}},
		{"word tags and directions kept", "Anna: <whisper>Run</whisper> [gasps] now.", "<|speaker:0|><whisper>Run</whisper> [gasps] now.", []Character{{"Anna", 1}}},
		{"one name however written", "ANNA: One.\nanna: Two.\n  Anna  : Three.", "<|speaker:0|>One.\n<|speaker:0|>Two.\n<|speaker:0|>Three.", []Character{{"ANNA", 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseScreenplay(tc.in, ScreenplayOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Script != tc.want || fmt.Sprint(got.Characters) != fmt.Sprint(tc.chars) {
				t.Errorf("got %q %v, want %q %v", got.Script, got.Characters, tc.want, tc.chars)
			}
		})
	}
}

func TestParseScreenplayNarrates(t *testing.T) {
	in := "INT. HALL\n\nThe clock strikes.\n\nANNA\nMidnight.\n\n> THE END <\n\nFADE OUT."
	got, err := ParseScreenplay(in, ScreenplayOptions{Narrate: true})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|speaker:0|>The clock strikes.\n<|speaker:1|>Midnight.\n<|speaker:0|>THE END"
	if got.Script != want || got.Characters[0].Name != Narrator {
		t.Errorf("got %q %v, want %q", got.Script, got.Characters, want)
	}
	without, err := ParseScreenplay(in, ScreenplayOptions{})
	if err != nil || without.Script != "<|speaker:0|>Midnight." || fmt.Sprint(without.LeftOut) != "[{scene headings 1} {transitions 1} {action paragraphs 2}]" {
		t.Errorf("without narration: %q %v %v", without.Script, without.LeftOut, err)
	}
}

func TestParseScreenplayRefuses(t *testing.T) {
	var many strings.Builder
	for i := range MaxCharacters + 1 {
		fmt.Fprintf(&many, "Person %c: Hello.\n", 'A'+i)
	}
	for _, tc := range []struct{ name, in, says string }{
		{"not UTF-8", "Anna: \xff", "not UTF-8"},
		{"the engine's markup", "Anna: hi\nBen: <|speaker:3|>no", "line 2 holds the engine's markup"},
		{"no dialogue", "INT. HALL\n\nNothing is said.", "found no dialogue"},
		{"seventeen characters", many.String(), `"Person Q", the next, first speaks in speech 17`},
		{"too large", strings.Repeat("a", MaxScreenplayBytes+1), "larger than 512 KiB, the most that is read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScreenplay(tc.in, ScreenplayOptions{})
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v, want one saying %q", err, tc.says)
			}
		})
	}
}

// checkScreenplay checks what ParseScreenplay promises of every script.
func checkScreenplay(t *testing.T, s Screenplay) {
	t.Helper()
	if !utf8.ValidString(s.Script) {
		t.Fatalf("script not UTF-8: %q", s.Script)
	}
	if len(s.Characters) == 0 || len(s.Characters) > MaxCharacters {
		t.Fatalf("%d characters", len(s.Characters))
	}
	tags := speakerTag.FindAllStringSubmatchIndex(s.Script, -1)
	if len(tags) != s.Lines || !strings.HasPrefix(s.Script, "<|speaker:") {
		t.Fatalf("%d tags for %d lines in %q", len(tags), s.Lines, s.Script)
	}
	count := make([]int, len(s.Characters))
	for i, m := range tags {
		n, _ := strconv.Atoi(s.Script[m[2]:m[3]])
		if n >= len(s.Characters) {
			t.Fatalf("speaker %d of %d characters", n, len(s.Characters))
		}
		count[n]++
		end := len(s.Script)
		if i+1 < len(tags) {
			end = tags[i+1][0]
		}
		if words := s.Script[m[1]:end]; strings.TrimSpace(words) == "" || strings.Contains(words, "<|") {
			t.Fatalf("speech %d: %q", i+1, words)
		}
	}
	for i, c := range s.Characters {
		if c.Lines != count[i] || c.Lines == 0 || strings.TrimSpace(c.Name) != c.Name || c.Name == "" {
			t.Fatalf("character %d %+v speaks %d lines", i, c, count[i])
		}
	}
}

func TestParseScreenplayPromises(t *testing.T) {
	for _, narrate := range []bool{false, true} {
		s, err := ParseScreenplay(fountainSample, ScreenplayOptions{Narrate: narrate})
		if err != nil {
			t.Fatal(err)
		}
		checkScreenplay(t, s)
	}
}

func FuzzParseScreenplay(f *testing.F) {
	for _, s := range []string{fountainSample, "Anna: hi\nBen: (sighs) ok", "张三：你好", "ANNA\n(beat)\n\n", "@x\n**\n", "A: _b_ _c_"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, in string, narrate bool) {
		s, err := ParseScreenplay(in, ScreenplayOptions{Narrate: narrate})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error that says nothing")
			}
			return
		}
		checkScreenplay(t, s)
		// Written out as Fountain and read again: neither may panic (TestFountainRoundTrip checks the text).
		names := make([]string, len(s.Characters))
		for i, c := range s.Characters {
			names[i] = c.Name
		}
		if _, err := ParseScreenplay(FormatFountain(in, Lines(s.Script), names), ScreenplayOptions{Narrate: true}); err != nil && err.Error() == "" {
			t.Fatal("an error that says nothing")
		}
	})
}

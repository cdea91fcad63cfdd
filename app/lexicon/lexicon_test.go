package lexicon

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestApply(t *testing.T) {
	lex := []Entry{
		{"Nguyen", "Win"},
		{"SQL", "sequel"},
		{"New York", "Noo Yawk"},
		{"New", "Nu"},
		{"C++", "C plus plus"},
		{"Ann", "Anne-Marie"},
		{"Zoë", "Zo-ee"},
		{"东京", "Tokyo"},
	}
	for _, c := range []struct{ in, want string }{
		{"Mr Nguyen's SQL.", "Mr Win's sequel."},
		{"New York is new; New is New.", "Noo Yawk is new; Nu is Nu."},
		{"sql and Nguyenx and xNguyen", "sql and Nguyenx and xNguyen"},
		{"I write C++, not C+++x.", "I write C plus plus, not C plus plus+x."},
		{"Anna met Ann.", "Anna met Anne-Marie."},
		// The spoken form is not matched again ("Anne-Marie" holds "Ann").
		{"Ann Ann", "Anne-Marie Anne-Marie"},
		{"Zoë, Zoëy", "Zo-ee, Zoëy"},
		{"去东京。", "去Tokyo。"},
		// Markup is never rewritten; the words around it are.
		{"<|speaker:1|>[Nguyen whispers] <SQL>Nguyen</SQL>", "<|speaker:1|>[Nguyen whispers] <SQL>Win</SQL>"},
		{"Nguyen[laughs]Nguyen", "Win[laughs]Win"},
	} {
		if got := Apply(c.in, lex); got != c.want {
			t.Errorf("Apply(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Apply("Nguyen", nil); got != "Nguyen" {
		t.Errorf("no lexicon: %q", got)
	}
	if got := Apply("Nguyen", []Entry{{"", "x"}}); got != "Nguyen" {
		t.Errorf("an empty written form: %q", got)
	}
}

func TestCheck(t *testing.T) {
	if err := Check([]Entry{{"Nguyen", "Win"}, {"New York", "Noo Yawk"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		lex  []Entry
		want string
	}{
		{[]Entry{{"", "x"}}, "pronunciation 1: the written form"},
		{[]Entry{{"a", " b"}}, "begins or ends with a space"},
		{[]Entry{{"a", "b\nc"}}, "on several lines"},
		{[]Entry{{"[a]", "b"}}, "holds markup"},
		{[]Entry{{"a", "<|im_end|>"}}, "the spoken form"},
		{[]Entry{{"a", strings.Repeat("b", MaxEntryBytes+1)}}, "at most 100"},
		{[]Entry{{"a", "b"}, {"c", "d"}, {"a", "e"}}, `pronunciations 1 and 3 both say how to speak "a"`},
		{[]Entry{{"a", "\xff"}}, "not UTF-8"},
		{make([]Entry, MaxEntries+1), "at most 500"},
	} {
		err := Check(c.lex)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Check(%.60q) = %v, want %q", c.lex, err, c.want)
		}
	}
}

// FuzzApply holds, for any text and a checked entry, that markup is kept,
// no written form is left where it stands as whole words, and text without
// a match is unchanged.
func FuzzApply(f *testing.F) {
	f.Add("Mr Nguyen's [calm] SQL, Nguyenx.", "Nguyen", "Win")
	f.Add("<|speaker:1|>C++ and C+++", "C++", "C plus plus")
	f.Add("东京东京", "东京", "Tokyo")
	f.Fuzz(func(t *testing.T, text, written, spoken string) {
		lex := []Entry{{written, spoken}}
		if Check(lex) != nil || !utf8.ValidString(text) {
			return
		}
		got := Apply(text, lex)
		if !strings.Contains(text, written) && got != text {
			t.Fatalf("Apply(%q) changed text without %q: %q", text, written, got)
		}
		if strings.Contains(spoken, written) {
			return
		}
		if again := Apply(got, lex); again != got && !strings.Contains(text, spoken) {
			// A whole-word match left behind would be replaced again.
			t.Fatalf("Apply(%q) = %q left a match: %q", text, got, again)
		}
	})
}

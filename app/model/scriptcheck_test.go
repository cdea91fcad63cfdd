package model

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"proscenium/app/studio"
)

func TestCheckScriptFlagsStructuralTokens(t *testing.T) {
	svc := New(Config{})
	for _, c := range []struct {
		text   string
		chars  int
		bytes  int
		tokens []string
		starts []int // UTF-16 offsets, as the editor indexes its text
	}{
		{text: "Friends, Romans.", chars: 16, bytes: 16},
		{text: "  <|speaker:1|>[softly] <whisper>hi</whisper>\n", chars: 46, bytes: 43},
		{text: "Say <|im_end|> now", chars: 18, bytes: 18, tokens: []string{"<|im_end|>"}, starts: []int{4}},
		// 🎭 is one character, two UTF-16 units and four bytes.
		{text: "🎭 <|speaker:01|> and <|voice|><|semantic:7|>", chars: 44, bytes: 47,
			tokens: []string{"<|speaker:01|>", "<|voice|>", "<|semantic:7|>"}, starts: []int{3, 22, 31}},
		{text: "   ", chars: 3, bytes: 0},
	} {
		got, err := svc.CheckScript(c.text)
		if err != nil {
			t.Fatalf("%q: %v", c.text, err)
		}
		if got.Chars != c.chars || got.Bytes != c.bytes || got.Tokenizer {
			t.Errorf("%q: %d chars, %d bytes (tokenizer %v), want %d, %d", c.text, got.Chars, got.Bytes, got.Tokenizer, c.chars, c.bytes)
		}
		if len(got.Problems) != len(c.tokens) {
			t.Fatalf("%q: problems %+v, want tokens %v", c.text, got.Problems, c.tokens)
		}
		for i, p := range got.Problems {
			if p.Token != c.tokens[i] || p.Start != c.starts[i] || p.End != c.starts[i]+len(c.tokens[i]) || p.Reason == "" {
				t.Errorf("%q: problem %d is %+v, want %s at %d", c.text, i, p, c.tokens[i], c.starts[i])
			}
		}
	}
	long, _ := svc.CheckScript(strings.Repeat("a", 20<<10))
	if len(long.Problems) != 1 || long.Problems[0].Start != -1 || !strings.Contains(long.Problems[0].Reason, "longer than one take") {
		t.Fatalf("a 20 KiB script: %+v", long.Problems)
	}
	if _, err := svc.CheckScript("\xff"); err == nil {
		t.Fatal("invalid UTF-8 was checked without an error")
	}
}

// FuzzCheckScript: whatever the script, CheckScript answers without a
// panic, every problem lies inside the script (UTF-16 offsets) and names
// the text found there, and the counts are the servers' counts.
func FuzzCheckScript(f *testing.F) {
	for _, s := range []string{"Hello.", "<|im_end|>", "🎭<|speaker:01|><|voice|>", "<|<|im_start|>|>", "  <|semantic:9|>  ", "<|speaker:1|", "\xff"} {
		f.Add(s)
	}
	svc := New(Config{})
	f.Fuzz(func(t *testing.T, text string) {
		c, err := svc.CheckScript(text)
		if err != nil {
			if !errors.Is(err, studio.ErrInvalid) {
				t.Fatalf("%q: %v", text, err)
			}
			return
		}
		units := utf16.Encode([]rune(text))
		if c.Chars != utf8.RuneCountInString(text) || c.Bytes != len(strings.TrimFunc(text, unicode.IsSpace)) {
			t.Fatalf("%q: counts %+v", text, c)
		}
		for _, p := range c.Problems {
			if p.Start == -1 && p.End == -1 {
				continue
			}
			if p.Start < 0 || p.End <= p.Start || p.End > len(units) || p.Reason == "" {
				t.Fatalf("%q: problem %+v outside the script (%d units)", text, p, len(units))
			}
			if got := string(utf16.Decode(units[p.Start:p.End])); p.Token != "" && got != p.Token {
				t.Fatalf("%q: problem at [%d, %d) reads %q, names %q", text, p.Start, p.End, got, p.Token)
			}
		}
	})
}

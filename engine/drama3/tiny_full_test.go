package drama3

import (
	"io"
	"testing"

	"proscenium/engine/checkpoint"
)

// WriteFull's checkpoint (here at the demo geometry, streamed into several
// shards by parallel writers) binds completely, and its FP8 experts hold no
// NaN code; the full geometry parses.
func TestWriteFull(t *testing.T) {
	base := baseTokenizer(t)
	cfg := TinyConfig()
	cfg.Text.VocabSize = 155840
	dir := t.TempDir()
	if err := WriteFull(dir, FullOptions{Seed: 3, BaseTokenizer: base, Config: cfg, ShardBytes: 4 << 20, Workers: 3}); err != nil {
		t.Fatal(err)
	}
	ck, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	if len(ck.Index.Tensors()) < 10 || ck.Index.TotalBytes() < StoredWeightBytes(cfg)*9/10 {
		t.Fatalf("%d tensors, %d bytes", len(ck.Index.Tensors()), ck.Index.TotalBytes())
	}
	nan, fp8, files := 0, 0, map[string]bool{}
	for _, ti := range ck.Index.Tensors() {
		files[ti.File] = true
		if ti.DType != checkpoint.F8E4M3 {
			continue
		}
		fp8++
		tn, err := ck.Index.ReadTensor(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range tn.Data {
			if c&0x7f == 0x7f {
				nan++
			}
		}
	}
	if nan != 0 || fp8 == 0 || len(files) < 2 {
		t.Fatalf("%d NaN codes in %d FP8 tensors, %d shards", nan, fp8, len(files))
	}
	if _, err := FullConfig(); err != nil {
		t.Fatal(err)
	}
}

// The generators' speed per core (bytes to io.Discard): the full
// checkpoint's write time is its bytes over this times the workers, or the
// disk's speed, whichever is slower.
func BenchmarkFullFill(b *testing.B) {
	const n = 64 << 20
	cfg := TinyConfig()
	bf16 := fillBF16(initFor(cfg, Expected{Group: "backbone", Name: "layers.0.mlp.gate.weight", Shape: []int{64, 64}}))
	for _, c := range []struct {
		name  string
		fill  func(*tinyRand, io.Writer, int64) error
		bytes int64
	}{{"fp8", fillFP8, n}, {"bf16", bf16, 2 * n}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(c.bytes)
			for range b.N {
				if err := c.fill(newTinyRand(1, "x"), io.Discard, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

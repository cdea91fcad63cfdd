package cpu

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// Backbone throughput on the golden checkpoints (docs/PERF.md "Backbone"):
// "like" is make-tiny's geometry (drama3.TinyConfig), "odd" TinyOddConfig;
// rows/s of a 128-row prefill and of one-row steps after a 128-row prefill.
// go test ./engine/cpu -run '^$' -bench Backbone -benchtime 20x

func benchWeights(b *testing.B, name string) *testBackbone {
	cfg, w, err := LoadBackboneDir(filepath.Join("testdata", "backbone", "ckpt", name))
	if err != nil {
		b.Fatal(err)
	}
	return &testBackbone{Geometry: *cfg, Backbone: *w}
}

func BenchmarkBackbonePrefill128(b *testing.B) {
	for _, name := range []string{"like", "odd"} {
		b.Run(name, func(b *testing.B) {
			w := benchWeights(b, name)
			g := w.Geometry
			rows := TokenRows(randomIDs(rand.New(rand.NewPCG(1, 2)), 128, g.VocabSize))
			bb, err := newTestBackbone(w)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				bb.Reset()
				if _, err := bb.Run(rows); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(128*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func BenchmarkBackboneStep(b *testing.B) {
	for _, name := range []string{"like", "odd"} {
		b.Run(name, func(b *testing.B) {
			w := benchWeights(b, name)
			g := w.Geometry
			ids := randomIDs(rand.New(rand.NewPCG(1, 2)), 128+b.N, g.VocabSize)
			bb, err := newTestBackbone(w)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := bb.Run(TokenRows(ids[:128])); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := bb.Run(TokenRows(ids[128+i : 129+i])); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

package cpu

import (
	"math/rand/v2"
	"testing"
)

// Backbone throughput on the test geometries (docs/PERF.md "Backbone"):
// rows/s of a 128-row prefill and of one-row steps after a 128-row prefill.
// go test ./engine/cpu -run '^$' -bench Backbone -benchtime 20x

func benchGeometries() map[string]BackboneGeometry {
	return map[string]BackboneGeometry{"like": geometryLike(), "odd": geometryOdd()}
}

func BenchmarkBackbonePrefill128(b *testing.B) {
	for name, g := range benchGeometries() {
		b.Run(name, func(b *testing.B) {
			w := randomBackbone(g, 1)
			rows := TokenRows(randomIDs(rand.New(rand.NewPCG(1, 2)), 128, g.Vocab))
			bb, err := NewBackbone(w)
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
	for name, g := range benchGeometries() {
		b.Run(name, func(b *testing.B) {
			w := randomBackbone(g, 1)
			ids := randomIDs(rand.New(rand.NewPCG(1, 2)), 128+b.N, g.Vocab)
			bb, err := NewBackbone(w)
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

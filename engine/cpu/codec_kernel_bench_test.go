package cpu

import (
	"math/rand/v2"
	"testing"

	"proscenium/engine/internal/testutil"
)

// BenchmarkCodecConvKernel: one causal conv at the decoder's block-2 size
// (384 → 384 channels, kernel 7), 512 output times: 0.53 G multiply-adds.
func BenchmarkCodecConvKernel(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const ch, k, n = 384, 7, 512
	c := newCodecConv(randVec(r, ch*ch*k), randVec(r, ch), ch, ch, k, 1)
	x := randSignal(r, 0, n, ch)
	y := codecSignal{start: 0, n: n, ch: ch, data: make([]float32, n*ch)}
	b.ResetTimer()
	cpu0 := testutil.ProcessCPUSeconds()
	for i := 0; i < b.N; i++ {
		c.apply(y, x)
	}
	b.ReportMetric(float64(ch*ch*k*n)*float64(b.N)/(testutil.ProcessCPUSeconds()-cpu0)/1e9, "GMAC/cpu-s")
}

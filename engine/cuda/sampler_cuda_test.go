//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// The device sampler against drama3.Sampler on random logits with the same
// Philox counters. The two sum in different orders and may differ in exp's
// last bit, so a draw whose target lies within rounding of a boundary (or
// whose top-p cut does) may pick the neighbour: those are counted and
// reported; any other difference fails.

// randomLogits fills one vector from one of several shapes: wide and narrow
// normal spreads, a dominant peak, and coarse steps (many exact ties).
func randomLogits(r *rand.Rand, v []float32) {
	kind := r.IntN(4)
	sigma := []float64{0.5, 2, 6}[r.IntN(3)]
	for i := range v {
		x := r.NormFloat64() * sigma
		if kind == 3 {
			x = math.Round(x*4) / 4
		}
		v[i] = float32(x)
	}
	if kind == 2 {
		v[r.IntN(len(v))] += float32(5 + 5*r.Float64())
	}
}

// TestSamplerMatchesCPU checks the four kernels (bisection, warp
// selection, warp selection with a one-warp end: the default, and the lean
// draw: the default with fewer round trips) on 100 000 vectors each.
func TestSamplerMatchesCPU(t *testing.T) {
	kernels := []struct {
		name  string
		total int
	}{{"sample_logits", 100_000}, {"sample_logits_warp", 100_000}, {"sample_logits_warp_pick", 100_000},
		{"sample_logits_lean", 100_000}}
	for _, k := range kernels {
		t.Run(k.name, func(t *testing.T) {
			defer func(was string) { sampleKernel = was }(sampleKernel)
			sampleKernel = k.name
			total := k.total
			if testing.Short() {
				total = 12_000
			}
			checkSamplerAgainstCPU(t, total)
		})
	}
}

func checkSamplerAgainstCPU(t *testing.T, total int) {
	settings := []sampling.Settings{
		{Temperature: 0, TopP: 1},
		{Temperature: 0.7, TopP: 0.9, TopK: 30},
		{Temperature: 1, TopP: 1},
		{Temperature: 0.7, TopP: 1},
		{Temperature: 1, TopP: 0.9},
		{Temperature: 1.3, TopP: 0.5, TopK: 5},
		{Temperature: 1, TopP: 1, TopK: 32},    // the warp selection's largest
		{Temperature: 2, TopP: 0.95, TopK: 33}, // the bisection's smallest
		{Temperature: 1, TopP: 1, TopK: 1},
	}
	sizes := []int{4097, 1024}
	per := total / (len(settings) * len(sizes))
	r := newRand(t)
	var draws, differ int
	for _, n := range sizes {
		logits := make([]float32, per*n)
		for b := 0; b < per; b++ {
			randomLogits(r, logits[b*n:(b+1)*n])
		}
		lb := upload(t, logits)
		out := alloc(t, per*4)
		ctrl := alloc(t, frameCtrlWords*4)
		for si, s := range settings {
			seed, frame0, cb := r.Uint64(), r.IntN(1<<20), r.IntN(10)
			c, err := newFrameControl(s, seed, 0)
			if err != nil {
				t.Fatal(err)
			}
			c[fcFrame] = uint32(frame0)
			c[fcForced] = 1 // a batch ignores forcing
			if err := firstErr(Upload(dev, ctrl, 0, c[:]), dev.Fill32(out, 0xffffffff)); err != nil {
				t.Fatal(err)
			}
			if err := dev.Run(func(q *Queue) error { return q.SampleBatch(lb, n, cb, per, ctrl, out) }); err != nil {
				t.Fatal(err)
			}
			got := make([]int32, per)
			if err := Download(dev, got, out, 0); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var fails []string
			var wg sync.WaitGroup
			workers := runtime.GOMAXPROCS(0)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					sm, _ := drama3.NewSampler(s, seed)
					for b := w; b < per; b += workers {
						v := logits[b*n : (b+1)*n]
						want, err := sm.Sample(v, frame0+b, cb)
						if err != nil {
							panic(err)
						}
						if int(got[b]) == want {
							continue
						}
						m := drama3.DrawMargin(v, s, drama3.Uniform(seed, frame0+b, cb))
						mu.Lock()
						differ++
						if !(m < drama3.RoundingTieMargin) {
							fails = append(fails, fmt.Sprintf("vector %d: device %d, CPU %d, margin %.3g", b, got[b], want, m))
						}
						mu.Unlock()
					}
				}(w)
			}
			wg.Wait()
			draws += per
			if len(fails) > 0 {
				t.Errorf("size %d settings %d %+v: %d draws differ with a clear margin, first: %s", n, si, s, len(fails), fails[0])
			}
		}
	}
	rate := float64(differ) / float64(draws)
	t.Logf("%d draws (sizes %v, %d settings): %d differ within rounding of a boundary, rate %.3g", draws, sizes, len(settings), differ, rate)
	if rate > 1e-4 {
		t.Errorf("disagreement rate %.3g > 1e-4", rate)
	}
}

func TestSamplerFrameDraw(t *testing.T) {
	ctrl := alloc(t, frameCtrlWords*4)
	c, err := newFrameControl(sampling.Settings{Temperature: 0, TopP: 1}, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := Upload(dev, ctrl, 0, c[:]); err != nil {
		t.Fatal(err)
	}
	logits := make([]float32, 4097)
	for i := range logits {
		logits[i] = float32(i % 7)
	}
	logits[4096] = 9 // end of speech wins the argmax
	lb := upload(t, logits)
	bad := upload(t, []float32{1, float32(math.Inf(1)), 2, 3})
	if err := dev.Run(func(q *Queue) error {
		return firstErr(q.SampleLogits(lb, 4097, 0, 4096, ctrl), q.SampleLogits(bad, 4, 3, -1, ctrl))
	}); err != nil {
		t.Fatal(err)
	}
	words := make([]uint32, FrameResultBytes/4)
	if err := Download(dev, words, ctrl, FrameResultOffset); err != nil {
		t.Fatal(err)
	}
	res := decodeFrameResult(words, 4)
	if res.Codes[0] != 4096 || !res.End || res.Codes[3] != 0 || res.Error != 1<<3 {
		t.Fatalf("result %+v, want end of speech drawn and codebook 3's infinite logit flagged", res)
	}
	// Ties: all equal logits, greedy, pick the lowest index.
	flat := upload(t, make([]float32, 1024))
	if err := dev.Run(func(q *Queue) error { return q.SampleLogits(flat, 1024, 1, -1, ctrl) }); err != nil {
		t.Fatal(err)
	}
	if err := Download(dev, words, ctrl, FrameResultOffset); err != nil {
		t.Fatal(err)
	}
	if words[1] != 0 {
		t.Fatalf("greedy over equal logits drew %d, want 0", words[1])
	}
}

//go:build cuda

package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/sampling"
)

// The lean draw (sample_logits_lean, PROSCENIUM_GPU_SAMPLER=lean) against
// the default draw (sample_logits_warp_pick): the same arithmetic in the
// same order, so the same code for every vector (not "within rounding":
// any difference fails), and for a frame row the same embedding bits. The
// CPU sampler checks both in TestSamplerMatchesCPU and TestTowerFrames.

// withSampler runs f with the draw kernel name, then restores the default.
func withSampler(name string, f func()) {
	defer func(was string) { sampleKernel = was }(sampleKernel)
	sampleKernel = name
	f()
}

// leanTestLogits fills v as randomLogits does, and in one vector of three
// turns a random fifth of it into ±0 (the lean draw decodes logits from the
// order keys, which make −0 +0; the maximum may be a zero too).
func leanTestLogits(r *rand.Rand, v []float32) {
	randomLogits(r, v)
	if r.IntN(3) != 0 {
		return
	}
	neg := float32(math.Copysign(0, -1))
	for i := range v {
		if r.IntN(5) == 0 {
			v[i] = [2]float32{0, neg}[r.IntN(2)]
		}
	}
}

func TestSamplerLeanMatchesWarpPick(t *testing.T) {
	settings := []sampling.Settings{
		{Temperature: 0, TopP: 1},
		{Temperature: 0.7, TopP: 0.9, TopK: 30}, // the product's
		{Temperature: 1, TopP: 1},
		{Temperature: 1, TopP: 0.9},
		{Temperature: 1.3, TopP: 0.5, TopK: 5},
		{Temperature: 1, TopP: 1, TopK: 32},    // the warp selection's largest
		{Temperature: 2, TopP: 0.95, TopK: 33}, // the bisection's smallest
		{Temperature: 1, TopP: 1, TopK: 1},
		{Temperature: 0.1, TopP: 1, TopK: 2},
	}
	per := 3000
	if testing.Short() {
		per = 600
	}
	r := newRand(t)
	draws := 0
	for _, n := range []int{4097, 1024, 40, 1} {
		logits := make([]float32, per*n)
		for b := 0; b < per; b++ {
			leanTestLogits(r, logits[b*n:(b+1)*n])
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
			var got [2][]int32
			for k, name := range []string{"sample_logits_warp_pick", "sample_logits_lean"} {
				withSampler(name, func() {
					if err := firstErr(Upload(dev, ctrl, 0, c[:]), dev.Fill32(out, 0xffffffff)); err != nil {
						t.Fatal(err)
					}
					if err := dev.Run(func(q *Queue) error { return q.SampleBatch(lb, n, cb, per, ctrl, out) }); err != nil {
						t.Fatal(err)
					}
					got[k] = make([]int32, per)
					if err := Download(dev, got[k], out, 0); err != nil {
						t.Fatal(err)
					}
				})
			}
			differ, first := 0, -1
			for b := range got[0] {
				if got[0][b] < 0 || int(got[0][b]) >= n {
					t.Fatalf("size %d settings %d vector %d: default drew %d", n, si, b, got[0][b])
				}
				if got[0][b] != got[1][b] {
					if first < 0 {
						first = b
					}
					differ++
				}
			}
			if differ > 0 {
				t.Errorf("size %d settings %d %+v: %d of %d draws differ, first vector %d: default %d, lean %d",
					n, si, s, differ, per, first, got[0][first], got[1][first])
			}
			draws += per
		}
	}
	t.Logf("%d draws, each by both kernels", draws)
}

// TestSamplerLeanEmbed draws the codes of three frame rows (a take each,
// the third after end of speech) with both kernels and their next-layer
// embedding halves enorm(E[code]): the codes and the halves' bits must
// agree, the halves within 1e-6 of the CPU's.
func TestSamplerLeanEmbed(t *testing.T) {
	const (
		rows = 3
		n    = 1024
		cb   = 4
		eps  = 1e-6
	)
	r := newRand(t)
	for _, width := range []int{2048, 100, 8192} {
		table := make([]uint16, n*width)
		for i := range table {
			table[i] = uint16(math.Float32bits(float32(r.NormFloat64())) >> 16)
		}
		enorm := randNonZero(r, width)
		logits := make([]float32, rows*n)
		for b := 0; b < rows; b++ {
			leanTestLogits(r, logits[b*n:(b+1)*n])
		}
		tb, eb, lb := upload(t, table), upload(t, enorm), upload(t, logits)
		ctrl := alloc(t, rows*frameCtrlWords*4)
		words := make([]uint32, 0, rows*frameCtrlWords)
		for b := 0; b < rows; b++ {
			c, err := newFrameControl(sampling.Settings{Temperature: 0.7, TopP: 0.9, TopK: 30}, r.Uint64(), 0)
			if err != nil {
				t.Fatal(err)
			}
			c[fcFrame] = uint32(r.IntN(3000))
			if b == rows-1 {
				c[fcEnd] = 1
			}
			words = append(words, c[:]...)
		}
		dst := alloc(t, rows*2*width*4)
		var codes [2][]int32
		var halves [2][]float32
		for k, name := range []string{"sample_logits_warp_pick", "sample_logits_lean"} {
			withSampler(name, func() {
				if err := firstErr(Upload(dev, ctrl, 0, words), dev.Fill32(dst, nanBits)); err != nil {
					t.Fatal(err)
				}
				emb := &drawEmbed{Table: Whole(tb), ENorm: Whole(eb), Entries: n,
					Dst: devPtr(dst) + kernel.Ptr(width*4), Width: width, Eps: eps}
				if err := dev.Run(func(q *Queue) error { return q.sampleLogits(lb, n, cb, -1, ctrl, nil, rows, emb, 0) }); err != nil {
					t.Fatal(err)
				}
				got := make([]uint32, rows*frameCtrlWords)
				if err := Download(dev, got, ctrl, 0); err != nil {
					t.Fatal(err)
				}
				for b := 0; b < rows; b++ {
					w := got[b*frameCtrlWords:]
					if w[fcError] != 0 {
						t.Fatalf("%s width %d row %d: error bits %#x", name, width, b, w[fcError])
					}
					codes[k] = append(codes[k], int32(w[fcCodes+cb]))
				}
				halves[k] = download(t, dst, rows*2*width)
			})
		}
		for b := 0; b < rows; b++ {
			if codes[0][b] != codes[1][b] {
				t.Fatalf("width %d row %d: default drew %d, lean %d", width, b, codes[0][b], codes[1][b])
			}
			code := int(codes[0][b])
			if b == rows-1 {
				code = 0 // after end of speech code 0 stands in
			}
			// The CPU's enorm(E[code]).
			var ss float64
			for c := 0; c < width; c++ {
				x := float64(math.Float32frombits(uint32(table[code*width+c]) << 16))
				ss += x * x
			}
			inv := float32(1 / math.Sqrt(ss/float64(width)+eps))
			for c := 0; c < 2*width; c++ {
				i := b*2*width + c
				g0, g1 := halves[0][i], halves[1][i]
				if math.Float32bits(g0) != math.Float32bits(g1) {
					t.Fatalf("width %d row %d [%d]: default %v, lean %v (must be the same bits)", width, b, c, g0, g1)
				}
				if c < width {
					if g0 == g0 {
						t.Fatalf("width %d row %d [%d] = %v outside the embedding half", width, b, c, g0)
					}
					continue
				}
				x := math.Float32frombits(uint32(table[code*width+c-width]) << 16)
				want := x * inv * enorm[c-width]
				if d := math.Abs(float64(g0 - want)); !(d <= 1e-6*math.Abs(float64(want))+1e-30) {
					t.Fatalf("width %d row %d [%d] = %v, CPU %v", width, b, c-width, g0, want)
				}
			}
		}
	}
}

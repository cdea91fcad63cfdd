//go:build cuda

package cuda

import (
	"math"
	"testing"

	"proscenium/engine/checkpoint"
)

// TestCodecConvGEMMKernel checks codec_conv_gemm against a plain float64
// reference of the same FP16-rounded operands, for every fused tail: a
// causal conv of 3 taps at dilation 2 over 40 channels (padded to 64) with
// 70 outputs (padded to 128) and 200 rows (two row tiles, the second
// partial), the history rows before the chunk random and non-zero, outputs
// poisoned with NaN.
func TestCodecConvGEMMKernel(t *testing.T) {
	r := newRand(t)
	const M, C, taps, dil, N, pos0 = 200, 40, 3, 2, 70, 1000
	cpad, npad, hist := roundUp(C, codecPadK), roundUp(N, codecPadN), (taps-1)*dil
	half := func(v float32) float32 { return checkpoint.F16ToF32(f32ToF16(v)) }

	a16 := make([]uint16, (hist+M)*cpad)
	aq := make([]float32, len(a16))
	av := randNonZero(r, (hist+M)*C)
	for t := 0; t < hist+M; t++ {
		for c := 0; c < C; c++ {
			h := f32ToF16(av[t*C+c])
			a16[t*cpad+c], aq[t*cpad+c] = h, checkpoint.F16ToF32(h)
		}
	}
	w := randNonZero(r, N*taps*C)
	for i := range w {
		w[i] *= 0.2
	}
	bias := randNonZero(r, N)
	res := randNonZero(r, M*N)
	p0, p1 := randNonZero(r, N), randNonZero(r, N)
	for i := range p0 {
		p0[i] = float32(math.Abs(float64(p0[i]))) + 0.5 // a Snake α
		p1[i] = 1 / (p0[i] + 1e-9)
	}
	freq := make([]float32, 32)
	for i := range freq {
		freq[i] = 1 / float32(math.Pow(10000, float64(2*i)/64))
	}
	// The reference sums exactly (float64) over the same FP16 values.
	ref := make([]float64, M*N)
	for m := 0; m < M; m++ {
		for o := 0; o < N; o++ {
			var s float64
			for k := 0; k < taps; k++ {
				row := hist + m - (taps-1-k)*dil
				for c := 0; c < C; c++ {
					s += float64(half(w[(o*taps+k)*C+c])) * float64(aq[row*cpad+c])
				}
			}
			ref[m*N+o] = s + float64(bias[o])
		}
	}
	g := codecGEMM{in: C, cpad: cpad, out: N, npad: npad, taps: taps, dil: dil,
		w: upload(t, packConvF16(w, N, taps, C)), bias: upload(t, padF32(bias, npad))}
	aBlk, resBlk := upload(t, a16), upload(t, res)
	p0Blk, p1Blk, freqBlk := upload(t, padF32(p0, npad)), upload(t, padF32(p1, npad)), upload(t, freq)

	snake := func(x, a, inv float64) float64 { s := math.Sin(a * x); return x + inv*s*s }
	gelu := func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
	silu := func(x float64) float64 { return x / (1 + math.Exp(-x)) }
	for _, tc := range []struct {
		name string
		mode int
		fp16 bool
		ldo  int
		want func(m, o int) float64 // output column o of row m
	}{
		{"f32", epiF32, false, N + 2, func(m, o int) float64 { return ref[m*N+o] }},
		{"residual", epiRes, false, N + 2, func(m, o int) float64 { return float64(res[m*N+o]) + ref[m*N+o] }},
		{"gamma", epiGamma, false, N + 2, func(m, o int) float64 { return float64(res[m*N+o]) + ref[m*N+o]*float64(p0[o]) }},
		{"tanh", epiTanh, false, N + 2, func(m, o int) float64 { return math.Tanh(ref[m*N+o]) }},
		{"rope", epiRope, false, N + 2, func(m, o int) float64 {
			if o >= 64 {
				return ref[m*N+o]
			}
			a := float64(float32(pos0+m) * freq[(o&63)>>1])
			c := float64(checkpoint.BF16ToF32(checkpoint.F32ToBF16(float32(math.Cos(a)))))
			s := float64(checkpoint.BF16ToF32(checkpoint.F32ToBF16(float32(math.Sin(a)))))
			x0, x1 := ref[m*N+(o&^1)], ref[m*N+(o|1)]
			if o&1 == 0 {
				return x0*c - x1*s
			}
			return x1*c + x0*s
		}},
		{"snake16", epiSnake16, true, roundUp(N, codecPadK), func(m, o int) float64 {
			if o >= N {
				return 0
			}
			return snake(ref[m*N+o], float64(p0[o]), float64(p1[o]))
		}},
		{"gelu16", epiGELU16, true, roundUp(N, codecPadK), func(m, o int) float64 {
			if o >= N {
				return 0
			}
			return gelu(ref[m*N+o])
		}},
		{"swiglu16", epiSwiGLU16, true, roundUp(N/2, codecPadK), func(m, o int) float64 {
			if o >= N/2 {
				return 0
			}
			return silu(ref[m*N+2*o]) * ref[m*N+2*o+1]
		}},
	} {
		bytes := 4
		if tc.fp16 {
			bytes = 2
		}
		out := alloc(t, M*tc.ldo*bytes)
		if err := dev.Fill32(out, 0x7fc07fc0); err != nil {
			t.Fatal(err)
		}
		call := gemmCall{a: aBlk.Ptr + uintptr(hist*cpad*2), rows: M, mode: tc.mode, out: out.Ptr, ldo: tc.ldo,
			res: resBlk.Ptr, ldr: N, p0: p0Blk.Ptr, p1: p1Blk.Ptr, pos0: pos0, freq: freqBlk.Ptr, ropeCols: 64}
		if err := dev.Do(func() error {
			q := &codecQueue{d: dev, s: dev.Stream()}
			if err := q.gemm(&g, call); err != nil {
				return err
			}
			return dev.Stream().Synchronize()
		}); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, M*tc.ldo)
		if tc.fp16 {
			h := make([]uint16, M*tc.ldo)
			if err := Download(dev, h, out, 0); err != nil {
				t.Fatal(err)
			}
			for i, v := range h {
				got[i] = checkpoint.F16ToF32(v)
			}
		} else if err := Download(dev, got, out, 0); err != nil {
			t.Fatal(err)
		}
		cols := tc.ldo
		if !tc.fp16 {
			cols = N
		}
		var num, den, worst float64
		for m := 0; m < M; m++ {
			for o := 0; o < cols; o++ {
				g, want := float64(got[m*tc.ldo+o]), tc.want(m, o)
				if math.IsNaN(g) {
					t.Fatalf("%s: row %d column %d not written", tc.name, m, o)
				}
				d := g - want
				num, den = num+d*d, den+want*want
				worst = math.Max(worst, math.Abs(d)/(math.Abs(want)+1e-3))
			}
			if !tc.fp16 {
				for o := N; o < tc.ldo; o++ {
					if g := got[m*tc.ldo+o]; g == g {
						t.Fatalf("%s: row %d column %d (past the outputs) was written: %v", tc.name, m, o, g)
					}
				}
			}
		}
		rel := math.Sqrt(num / den)
		tol := 1e-6 // FP32 accumulation of exact FP16 products
		switch {
		case tc.fp16:
			tol = 1e-3 // the result rounded to FP16
		case tc.mode == epiRope:
			tol = 1e-4 // cosf/sinf may land on the other side of a bfloat16 rounding
		}
		t.Logf("%s: relative L2 %.3g, worst element %.3g", tc.name, rel, worst)
		if !(rel <= tol) {
			t.Errorf("%s: relative L2 %.3g above %.3g", tc.name, rel, tol)
		}
	}
}

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/drama3"
)

// The codec primitives against float64 re-computations of PyTorch's
// definitions (Conv1d with CausalConvNet's padding, ConvTranspose1d with
// CausalTransConvNet's trim), and hand-computed values.

func randSignal(r *rand.Rand, start, n, ch int) codecSignal {
	return codecSignal{start: start, n: n, ch: ch, data: randVec(r, n*ch)}
}

// window returns times [a, b) of s (sharing its data).
func (s codecSignal) window(a, b int) codecSignal {
	return codecSignal{start: a, n: b - a, ch: s.ch, data: s.data[(a-s.start)*s.ch : (b-s.start)*s.ch]}
}

func TestCodecConvAgainstFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct{ in, out, k, d, n int }{
		{1, 1, 1, 1, 5}, {3, 5, 7, 1, 20}, {8, 9, 7, 3, 40}, {6, 4, 7, 9, 90}, {16, 16, 1, 1, 9}, {5, 1, 7, 1, 33},
	} {
		w, b := randVec(r, tc.out*tc.in*tc.k), randVec(r, tc.out)
		x := randSignal(r, 0, tc.n, tc.in)
		c := newCodecConv(w, b, tc.out, tc.in, tc.k, tc.d)
		got := codecSignal{start: 0, n: tc.n, ch: tc.out, data: make([]float32, tc.n*tc.out)}
		c.apply(got, x)
		want := make([]float32, tc.n*tc.out)
		for tt := 0; tt < tc.n; tt++ {
			for o := 0; o < tc.out; o++ {
				s := float64(b[o])
				for ci := 0; ci < tc.in; ci++ {
					for k := 0; k < tc.k; k++ {
						// Padded input index tt + k·d maps to time tt + k·d − (K−1)·d.
						if ti := tt + k*tc.d - (tc.k-1)*tc.d; ti >= 0 {
							s += float64(w[(o*tc.in+ci)*tc.k+k]) * float64(x.data[ti*tc.in+ci])
						}
					}
				}
				want[tt*tc.out+o] = float32(s)
			}
		}
		if e := relErr(got.data, want); !(e < 1e-6) {
			t.Errorf("%+v: relative error %g", tc, e)
		}
		// A window computed alone, from exactly the inputs it reads, is
		// bit-identical to the same times of the whole.
		for _, a := range []int{1, c.history(), c.history() + 1, tc.n / 2} {
			if a <= 0 || a >= tc.n {
				continue
			}
			part := codecSignal{start: a, n: tc.n - a, ch: tc.out, data: make([]float32, (tc.n-a)*tc.out)}
			c.apply(part, x.window(max(0, a-c.history()), tc.n))
			if i, ok := sameBits(part.data, got.data[a*tc.out:]); !ok {
				t.Errorf("%+v: window from %d differs at %d", tc, a, i)
			}
		}
	}
}

func TestCodecTransConvAgainstFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct{ in, out, k, s, n int }{
		{4, 3, 2, 2, 6}, {5, 4, 4, 2, 7}, {8, 4, 16, 8, 5}, {6, 3, 8, 4, 9}, {3, 2, 6, 2, 4},
	} {
		w, b := randVec(r, tc.in*tc.out*tc.k), randVec(r, tc.out)
		x := randSignal(r, 0, tc.n, tc.in)
		// ConvTranspose1d: full output (n−1)·s + K, then trim K − s on the right.
		full := make([]float64, ((tc.n-1)*tc.s+tc.k)*tc.out)
		for i := 0; i < tc.n; i++ {
			for j := 0; j < tc.k; j++ {
				for o := 0; o < tc.out; o++ {
					for ci := 0; ci < tc.in; ci++ {
						full[(i*tc.s+j)*tc.out+o] += float64(w[(ci*tc.out+o)*tc.k+j]) * float64(x.data[i*tc.in+ci])
					}
				}
			}
		}
		want := make([]float32, tc.n*tc.s*tc.out)
		for i := range want {
			want[i] = float32(full[i] + float64(b[i%tc.out]))
		}
		st := &codecTransConvStage{conv: newCodecTransConv(w, b, tc.in, tc.out, tc.k, tc.s), stride: tc.s, out: tc.out}
		ws := &CodecScratch{poisonNew: true}
		got := st.run(x, 0, ws)
		if got.start != 0 || got.n != tc.n*tc.s || got.ch != tc.out {
			t.Fatalf("%+v: window [%d,+%d)×%d", tc, got.start, got.n, got.ch)
		}
		if e := relErr(got.data[:len(want)], want); !(e < 1e-6) {
			t.Errorf("%+v: relative error %g", tc, e)
		}
		// From output sample a, reading inputs from a/s − history.
		for _, a := range []int{tc.s, tc.s*2 + 1, tc.n*tc.s - 1} {
			i0 := max(0, a/tc.s-st.history())
			part := st.run(x.window(i0, tc.n), a, ws)
			if part.start > a {
				t.Fatalf("%+v: window from %d starts at %d", tc, a, part.start)
			}
			if i, ok := sameBits(part.data[:(tc.n*tc.s-part.start)*tc.out], got.data[part.start*tc.out:len(want)]); !ok {
				t.Errorf("%+v: window from %d differs at %d", tc, a, i)
			}
		}
	}
}

func TestCodecSnakeAgainstFloat64(t *testing.T) {
	alpha := []float32{0.5, 1, 2.5, 1e-3}
	s := newCodecSnake(alpha)
	x := codecSignal{n: 3, ch: 4, data: []float32{-3, -0.5, 0, 0.25, 1, 2, 3, -7, 100, -100, 1e-3, 42}}
	y := codecSignal{n: 3, ch: 4, data: make([]float32, 12)}
	s.apply(y, x)
	for i, v := range x.data {
		a := float64(alpha[i%4])
		sn := math.Sin(a * float64(v))
		want := float64(v) + sn*sn/(a+1e-9)
		if d := math.Abs(float64(y.data[i]) - want); d > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("snake(%v; α=%v) = %v, want %v", v, a, y.data[i], want)
		}
	}
}

func TestCodecLayerNormAndGELU(t *testing.T) {
	x := []float32{1, 2, 3, 6}
	w := []float32{1, 2, 0.5, -1}
	b := []float32{0, 1, 0, 0.5}
	// mean 3, biased variance (4+1+0+9)/4 = 3.5
	y := make([]float32, 4)
	codecLayerNorm(y, x, w, b, 1e-6)
	for i := range x {
		want := (float64(x[i])-3)/math.Sqrt(3.5+1e-6)*float64(w[i]) + float64(b[i])
		if math.Abs(float64(y[i])-want) > 1e-6 {
			t.Errorf("layernorm[%d] = %v, want %v", i, y[i], want)
		}
	}
	for _, tc := range []struct{ x, want float64 }{
		{0, 0}, {1, 0.8413447460685429}, {-1, -0.15865525393145707}, {3, 2.9959503059051106}, // 3·Φ(3), Φ(3) = 0.99865010196837
	} {
		if got := codecGELU(float32(tc.x)); math.Abs(float64(got)-tc.want) > 3e-7 {
			t.Errorf("gelu(%v) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

func TestCodecRopeTable(t *testing.T) {
	f := drama3.CodecRopeFreqs(1e4)
	if f[0] != 1 || math.Abs(float64(f[1])-math.Pow(1e4, -1.0/32)) > 1e-7 || math.Abs(float64(f[31])-math.Pow(1e4, -31.0/32)) > 1e-10 {
		t.Errorf("frequencies %v … %v", f[:2], f[31])
	}
	cos, sin := make([]float32, 32), make([]float32, 32)
	drama3.CodecRopeRow(cos, sin, f, 1)
	// cos 1 = 0.5403023 and sin 1 = 0.8414710 rounded to bfloat16 (8
	// significant bits): 1.078125·2⁻¹ and 1.6796875·2⁻¹.
	if cos[0] != 0.5390625 || sin[0] != 0.83984375 {
		t.Errorf("pos 1: cos %v sin %v, want 0.5390625 0.83984375", cos[0], sin[0])
	}
	drama3.CodecRopeRow(cos, sin, f, 0)
	if cos[5] != 1 || sin[5] != 0 {
		t.Errorf("pos 0: cos %v sin %v", cos[5], sin[5])
	}
	// Interleaved pairs: (x0, x1) turns by the pair's angle.
	x := []float32{1, 2, 3, 4}
	codecRope(x, []float32{0.5, 1}, []float32{0.25, 0})
	if want := []float32{1*0.5 - 2*0.25, 2*0.5 + 1*0.25, 3, 4}; x[0] != want[0] || x[1] != want[1] || x[2] != want[2] || x[3] != want[3] {
		t.Errorf("rope %v, want %v", x, want)
	}
}

// TestCodecDotKernelsAgree: the AVX2 kernel and the Go lanes give the same
// bits, and the tiled and single-element paths agree with each other.
func TestCodecDotKernelsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, n := range []int{1, 7, 8, 9, 16, 63, 64, 200, 1031} {
		stride := n + 5
		w := randVec(r, 3*stride+n)
		x0, x1 := randVec(r, n), randVec(r, n)
		var asm, gov codecAcc4x2
		for rep := 0; rep < 3; rep++ { // accumulate over several taps
			asm.add(w, stride, x0, x1)
			have := codecHaveAVX2
			codecHaveAVX2 = false
			gov.add(w, stride, x0, x1)
			codecHaveAVX2 = have
		}
		var single [8]codecAcc
		for rep := 0; rep < 3; rep++ {
			for j := 0; j < 4; j++ {
				single[2*j].add(w[j*stride:j*stride+n], x0)
				single[2*j+1].add(w[j*stride:j*stride+n], x1)
			}
		}
		for j := 0; j < 8; j++ {
			a, g, s := asm.sum(j), gov.sum(j), single[j].sum()
			if math.Float32bits(a) != math.Float32bits(g) || math.Float32bits(a) != math.Float32bits(s) {
				t.Errorf("n=%d element %d: kernel %v, Go %v, single %v", n, j, a, g, s)
			}
		}
	}
	if !codecHaveAVX2 {
		t.Log("no AVX2 here: only the Go lanes were compared")
	}
}

// TestCodecSin compares codecSin with float32(math.Sin) over many float32
// arguments: at most one ulp apart, and equal but for a handful.
func TestCodecSin(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	diff := 0
	const n = 2000000
	for i := 0; i < n; i++ {
		var x float32
		switch i % 4 {
		case 0:
			x = float32(r.NormFloat64())
		case 1:
			x = float32(r.NormFloat64() * 50)
		case 2:
			x = float32((r.Float64() - 0.5) * 2e6)
		default:
			x = float32(r.NormFloat64() * 1e-3)
		}
		got, want := codecSin(x), float32(math.Sin(float64(x)))
		if got != want {
			diff++
			if d := int64(math.Float32bits(got)) - int64(math.Float32bits(want)); d > 1 || d < -1 {
				t.Fatalf("codecSin(%v) = %v, want %v", x, got, want)
			}
		}
	}
	for _, x := range []float32{0, float32(math.Copysign(0, -1)), math.Pi, -math.Pi / 2, 1 << 21, float32(math.Inf(1)), float32(math.NaN())} {
		got, want := codecSin(x), float32(math.Sin(float64(x)))
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Errorf("codecSin(%v) = %v, want %v", x, got, want)
		}
	}
	t.Logf("%d of %d differ by one ulp", diff, n)
	if diff > n/10000 {
		t.Errorf("%d of %d differ", diff, n)
	}
}

package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/drama3"
)

// deltaRuleInputs draws a conv output (q, k L2-normalised, q scaled as the
// layer does), beta in (0, 1) and decays g ≤ 0 for n rows.
func deltaRuleInputs(r *rand.Rand, g *drama3.TextConfig, n int) (conv, beta, decay []float32) {
	ch := deltaNetChannels(g)
	conv = randVec(r, n*ch)
	for t := 0; t < n; t++ {
		for h := 0; h < 2*g.LinearNumKeyHeads; h++ {
			v := conv[t*ch+h*g.LinearKeyHeadDim:][:g.LinearKeyHeadDim]
			l2Normalize(v, 1e-6)
			if h < g.LinearNumKeyHeads {
				for i := range v {
					v[i] /= float32(math.Sqrt(float64(g.LinearKeyHeadDim)))
				}
			}
		}
	}
	beta = make([]float32, n*g.LinearNumValueHeads)
	decay = make([]float32, n*g.LinearNumValueHeads)
	for i := range beta {
		beta[i] = Sigmoid(float32(r.NormFloat64()))
		decay[i] = -float32(r.ExpFloat64() * 0.3)
	}
	return
}

// TestDeltaRuleChunkedMatchesRecurrent runs the two forms of the gated delta
// rule from the same non-zero state over lengths around the 64-row chunk and
// compares outputs and final states.
func TestDeltaRuleChunkedMatchesRecurrent(t *testing.T) {
	geoms := map[string]drama3.TextConfig{"like": geometryLike(), "odd": geometryOdd()}
	real := geometryLike()
	real.LinearNumKeyHeads, real.LinearNumValueHeads, real.LinearKeyHeadDim, real.LinearValueHeadDim = 2, 4, 128, 128
	geoms["dk128"] = real
	for name, g := range geoms {
		lengths := []int{2, 63, 64, 65, 150}
		if g.LinearKeyHeadDim == 128 {
			lengths = []int{65, 130}
		}
		for _, n := range lengths {
			r := rand.New(rand.NewPCG(uint64(n), 9))
			conv, beta, decay := deltaRuleInputs(r, &g, n)
			s0 := randVec(r, g.LinearNumValueHeads*g.LinearKeyHeadDim*g.LinearValueHeadDim)
			for i := range s0 {
				s0[i] *= 0.1
			}
			sRec, sChunk := append([]float32(nil), s0...), append([]float32(nil), s0...)
			oRec := make([]float32, n*g.LinearNumValueHeads*g.LinearValueHeadDim)
			oChunk := make([]float32, len(oRec))
			gatedDeltaRuleRecurrent(oRec, conv, beta, decay, n, &g, sRec)
			gatedDeltaRuleChunked(oChunk, conv, beta, decay, n, &g, sChunk)
			if e, row := maxRowErr(oChunk, oRec, g.LinearValueHeadDim); !(e < 1e-5) {
				t.Errorf("%s n=%d: output (row, head) %d relative error %g", name, n, row, e)
			}
			if e := relErr(sChunk, sRec); !(e < 1e-5) {
				t.Errorf("%s n=%d: final state relative error %g", name, n, e)
			}
		}
	}
}

// TestDeltaRuleHandComputed checks one head, dk = dv = 1, two rows, from a
// non-zero state, against values worked out by hand:
// S0 = 2; row 0: g = ln 0.5, k = 1, v = 3, β = 0.5, q = 1 → S = 1 + 0.5·(3−1) = 2, o = 2;
// row 1: g = 0, k = 1, v = 0, β = 1, q = 2 → S = 2 + (0 − 2) = 0, o = 0.
func TestDeltaRuleHandComputed(t *testing.T) {
	g := drama3.TextConfig{LinearNumKeyHeads: 1, LinearNumValueHeads: 1, LinearKeyHeadDim: 1, LinearValueHeadDim: 1}
	conv := []float32{1, 1, 3, 2, 1, 0} // per row: q, k, v
	beta := []float32{0.5, 1}
	decay := []float32{float32(math.Log(0.5)), 0}
	for name, rule := range map[string]func(core, conv, beta, decay []float32, n int, g *drama3.TextConfig, state []float32){
		"recurrent": gatedDeltaRuleRecurrent, "chunked": gatedDeltaRuleChunked,
	} {
		s := []float32{2}
		o := make([]float32, 2)
		rule(o, conv, beta, decay, 2, &g, s)
		if math.Abs(float64(o[0]-2)) > 1e-6 || math.Abs(float64(o[1])) > 1e-6 || math.Abs(float64(s[0])) > 1e-6 {
			t.Errorf("%s: outputs %v, state %v; want [2 0], [0]", name, o, s)
		}
	}
}

// TestCausalConvState checks the depthwise causal conv bit for bit against
// its definition (float64 sums of the taps in order, rounded once) and that
// splitting the rows over two calls (carrying the state) gives the same
// outputs.
func TestCausalConvState(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, ch, k = 9, 5, 4
	x, w := randVec(r, n*ch), randVec(r, ch*k)
	want := make([]float32, n*ch)
	for t := 0; t < n; t++ {
		for c := 0; c < ch; c++ {
			var s float64
			for j := 0; j < k; j++ {
				if src := t - (k - 1) + j; src >= 0 {
					s += float64(w[c*k+j]) * float64(x[src*ch+c])
				}
			}
			want[t*ch+c] = SiLU(float32(s))
		}
	}
	state := make([]float32, (k-1)*ch)
	whole := causalConvSiLU(x, n, ch, w, k, state)
	state = make([]float32, (k-1)*ch)
	first := causalConvSiLU(x[:2*ch], 2, ch, w, k, state)
	rest := causalConvSiLU(x[2*ch:], n-2, ch, w, k, state)
	for name, got := range map[string][]float32{"whole": whole, "split": append(first, rest...)} {
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Errorf("%s: element %d = %v, want %v", name, i, got[i], want[i])
				break
			}
		}
	}
}

func TestSoftplus(t *testing.T) {
	for _, x := range []float32{-30, -1, 0, 1, 19.9, 20, 25} {
		want := math.Log1p(math.Exp(float64(x)))
		if x > 20 {
			want = float64(x)
		}
		if got := softplus(x); math.Abs(float64(got)-want) > 1e-6*math.Max(1, want) {
			t.Errorf("softplus(%g) = %g, want %g", x, got, want)
		}
	}
}

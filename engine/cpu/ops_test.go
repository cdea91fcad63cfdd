package cpu

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// relErr is ‖a − b‖ / ‖b‖ in float64, b the reference (float32, or a float64
// re-computation); NaN when the lengths differ, so a tolerance check fails.
func relErr[T float32 | float64](a []float32, b []T) float64 {
	if len(a) != len(b) {
		return math.NaN()
	}
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num / den)
}

// exactDot is Σ a·b computed exactly (math/big) and rounded to float32 once:
// what the numerics contract's rule 1 defines Dot to be (docs/MODEL.md),
// but where the exact sum lies within float64 noise of a float32 rounding
// boundary.
func exactDot(a, b []float32) float32 {
	sum := new(big.Float).SetPrec(2048)
	for i := range a {
		p := new(big.Float).SetPrec(2048).SetFloat64(float64(a[i]))
		sum.Add(sum, p.Mul(p, new(big.Float).SetFloat64(float64(b[i]))))
	}
	f, _ := sum.Float32()
	return f
}

// TestMatVecIsExactDot checks Dot, MatVec and MatMulRows bit for bit against
// the exact sum rounded once, and that the order of the terms does not
// change Dot's result (the property the GPU's float64 kernels rely on).
func TestMatVecIsExactDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][2]int{{1, 1}, {7, 13}, {300, 515}, {1024, 256}, {64, 4096}} {
		rows, cols := sz[0], sz[1]
		w, x := randVec(r, rows*cols), randVec(r, cols)
		want := make([]float32, rows)
		for i := range want {
			want[i] = exactDot(w[i*cols:(i+1)*cols], x)
		}
		got := make([]float32, rows)
		for i := range got {
			got[i] = float32(math.NaN())
		}
		MatVec(got, w, x, rows, cols)
		rowsOut := make([]float32, 2*rows)
		MatMulRows(rowsOut, w, append(append([]float32{}, x...), x...), 2, rows, cols)
		perm := r.Perm(cols)
		wp, xp := make([]float32, cols), make([]float32, cols)
		for i := 0; i < rows; i++ {
			for j, p := range perm {
				wp[j], xp[j] = w[i*cols+p], x[p]
			}
			for _, c := range []struct {
				what string
				v    float32
			}{{"MatVec", got[i]}, {"MatMulRows", rowsOut[i]}, {"MatMulRows row 2", rowsOut[rows+i]}, {"Dot of permuted terms", Dot(wp, xp)}} {
				if math.Float32bits(c.v) != math.Float32bits(want[i]) {
					t.Fatalf("%dx%d row %d: %s = %v, want %v (the exact sum rounded once)", rows, cols, i, c.what, c.v, want[i])
				}
			}
		}
	}
	// A float32 running sum loses the small term: 1 + 2⁻³⁰ rounds to 1.
	if got := Dot([]float32{1, 0x1p-30, -1}, []float32{1, 1, 1}); got != 0x1p-30 {
		t.Errorf("Dot(1, 2⁻³⁰, −1) = %v, want 2⁻³⁰", got)
	}
}

func TestNorms(t *testing.T) {
	x := []float32{1, -2, 3, -4}
	w := []float32{0, 1, -0.5, 0.25}
	rms := math.Sqrt((1 + 4 + 9 + 16) / 4.0)
	zc := make([]float32, 4)
	RMSNormZeroCentred(zc, x, w, 0)
	plain := make([]float32, 4)
	RMSNorm(plain, x, w, 0)
	for i := range x {
		if want := float64(x[i]) / rms * (1 + float64(w[i])); math.Abs(float64(zc[i])-want) > 1e-6 {
			t.Errorf("zero-centred[%d] = %v, want %v", i, zc[i], want)
		}
		if want := float64(x[i]) / rms * float64(w[i]); math.Abs(float64(plain[i])-want) > 1e-6 {
			t.Errorf("plain[%d] = %v, want %v", i, plain[i], want)
		}
	}
}

func TestActivations(t *testing.T) {
	if got := SiLU(1); math.Abs(float64(got)-0.7310585786) > 1e-6 {
		t.Errorf("SiLU(1) = %v", got)
	}
	g, u := []float32{1, -1}, []float32{2, 3}
	d := make([]float32, 2)
	SwiGLU(d, g, u)
	if math.Abs(float64(d[0])-2*0.7310585786) > 1e-6 || math.Abs(float64(d[1])-3*-0.2689414214) > 1e-6 {
		t.Errorf("SwiGLU = %v", d)
	}
	tab := []float32{0, 1, 10, 11, 20, 21}
	dst := make([]float32, 4)
	GatherRows(dst, tab, []int{2, 0}, 2)
	if dst[0] != 20 || dst[1] != 21 || dst[2] != 0 || dst[3] != 1 {
		t.Errorf("GatherRows = %v", dst)
	}
}

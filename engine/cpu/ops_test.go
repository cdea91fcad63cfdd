package cpu

import (
	"math"
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

func TestMatVecAgainstFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][2]int{{1, 1}, {7, 13}, {300, 515}, {1024, 256}} {
		rows, cols := sz[0], sz[1]
		w, x := randVec(r, rows*cols), randVec(r, cols)
		got := make([]float32, rows)
		for i := range got {
			got[i] = float32(math.NaN())
		}
		MatVec(got, w, x, rows, cols)
		want := make([]float32, rows)
		for i := 0; i < rows; i++ {
			var s float64
			for c := 0; c < cols; c++ {
				s += float64(w[i*cols+c]) * float64(x[c])
			}
			want[i] = float32(s)
		}
		if e := relErr(got, want); !(e < 1e-6) {
			t.Errorf("%dx%d: relative error %g", rows, cols, e)
		}
		rowsOut := make([]float32, 2*rows)
		MatMulRows(rowsOut, w, append(append([]float32{}, x...), x...), 2, rows, cols)
		if e := relErr(rowsOut[rows:], want); !(e < 1e-6) {
			t.Errorf("MatMulRows %dx%d: relative error %g", rows, cols, e)
		}
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

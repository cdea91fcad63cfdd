package cpu

import "math"

// ropeTable is the rotate-half (NeoX) rotary embedding of the backbone's full
// attention on its first dim dims (partial rotary). Frequencies follow HF
// transformers: invFreq[i] = 1 / theta^(2i/dim) rounded to float32, and the
// angle pos·invFreq[i] is formed in float32 before cos/sin, so positions map
// to the same angles as the reference.
type ropeTable struct {
	dim     int
	invFreq []float32
}

func newRopeTable(dim int, theta float64) *ropeTable {
	t := &ropeTable{dim: dim, invFreq: make([]float32, dim/2)}
	for i := range t.invFreq {
		exp := float32(2*i) / float32(dim)
		t.invFreq[i] = float32(1 / float64(float32(math.Pow(theta, float64(exp)))))
	}
	return t
}

// cosSin fills cos and sin (dim/2 values each) for one position: the angle
// float32(pos)·invFreq[i] is one float32 product, its cos and sin are taken
// in float64 and rounded once (the numerics contract's rule 3).
func (t *ropeTable) cosSin(cos, sin []float32, pos int) {
	for i, f := range t.invFreq {
		a := float64(float32(pos) * f)
		cos[i] = float32(math.Cos(a))
		sin[i] = float32(math.Sin(a))
	}
}

// apply rotates the first dim values of x in place: for i < dim/2 the pair
// (x[i], x[i+dim/2]) turns by the angle of frequency i; the rest pass.
// Each product is rounded to float32 before the add (the numerics contract's
// rule 4: never fused), so x1·cos − x2·sin is three float32 roundings.
func (t *ropeTable) apply(x, cos, sin []float32) {
	h := t.dim / 2
	for i := 0; i < h; i++ {
		x1, x2 := x[i], x[i+h]
		x[i] = float32(x1*cos[i]) - float32(x2*sin[i])
		x[i+h] = float32(x2*cos[i]) + float32(x1*sin[i])
	}
}

package drama3

import (
	"math"

	"proscenium/engine/checkpoint"
)

// The rotary position tables the backends share: the tower's (interleaved
// pairs, float64 angles) and the codec transformers' (bfloat16-rounded, as
// the reference's precompute_freqs_cis). engine/cpu rotates with them and
// engine/cuda uploads them, so both compute from one definition.

// InterleavedRope rotates the leading dim values of a head vector as
// dim/2 interleaved pairs (x[2i], x[2i+1]), pair i by pos·theta^(−2i/dim).
type InterleavedRope struct {
	dim     int
	invFreq []float64
}

// NewInterleavedRope returns the rotation of dim values (even) with base theta.
func NewInterleavedRope(dim int, theta float64) *InterleavedRope {
	r := &InterleavedRope{dim: dim, invFreq: make([]float64, dim/2)}
	for i := range r.invFreq {
		r.invFreq[i] = math.Pow(theta, -float64(2*i)/float64(dim))
	}
	return r
}

// CosSin returns the float32 cos and sin of pair i at position pos.
func (r *InterleavedRope) CosSin(pos, i int) (float32, float32) {
	a := float64(pos) * r.invFreq[i]
	return float32(math.Cos(a)), float32(math.Sin(a))
}

// Apply rotates the leading pairs of one head vector in place.
func (r *InterleavedRope) Apply(x []float32, pos int) {
	for i := 0; i < r.dim/2; i++ {
		c, s := r.CosSin(pos, i)
		x0, x1 := x[2*i], x[2*i+1]
		x[2*i] = x0*c - x1*s
		x[2*i+1] = x0*s + x1*c
	}
}

// TowerRopeTable returns the tower's RoPE table for positions [0, rows):
// cos and sin, [rows, rotaryDim/2] each, exactly the values
// InterleavedRope rotates with (the table a device backend uploads).
func TowerRopeTable(rotaryDim int, theta float64, rows int) (cos, sin []float32) {
	r := NewInterleavedRope(rotaryDim, theta)
	half := rotaryDim / 2
	cos, sin = make([]float32, rows*half), make([]float32, rows*half)
	for p := 0; p < rows; p++ {
		for i := 0; i < half; i++ {
			cos[p*half+i], sin[p*half+i] = r.CosSin(p, i)
		}
	}
	return cos, sin
}

// CodecRopeFreqs forms θ_i = 1 / base^(2i/64) in float32 as
// precompute_freqs_cis does (exponent and power in float32).
func CodecRopeFreqs(base float64) []float32 {
	f := make([]float32, CodecHeadDim/2)
	for i := range f {
		e := float32(2*i) / float32(CodecHeadDim)
		f[i] = 1 / float32(math.Pow(base, float64(e)))
	}
	return f
}

// CodecRopeRow fills the bfloat16-rounded cos and sin of position pos.
func CodecRopeRow(cos, sin, freq []float32, pos int) {
	for i, f := range freq {
		a := float64(float32(pos) * f)
		cos[i] = checkpoint.BF16ToF32(checkpoint.F32ToBF16(float32(math.Cos(a))))
		sin[i] = checkpoint.BF16ToF32(checkpoint.F32ToBF16(float32(math.Sin(a))))
	}
}

// CodecRopeTable returns the bfloat16-rounded cos and sin [rows][32] of the
// codec transformers' RoPE (base ropeBase) at positions 0 … rows−1.
func CodecRopeTable(ropeBase float64, rows int) (cos, sin []float32) {
	freq := CodecRopeFreqs(ropeBase)
	half := len(freq)
	cos, sin = make([]float32, rows*half), make([]float32, rows*half)
	for t := 0; t < rows; t++ {
		CodecRopeRow(cos[t*half:(t+1)*half], sin[t*half:(t+1)*half], freq, t)
	}
	return cos, sin
}

package loudness

import "math"

// biquad is one second-order section, a0 normalised to 1:
// y[n] = b0 x[n] + b1 x[n-1] + b2 x[n-2] - a1 y[n-1] - a2 y[n-2].
type biquad struct{ b0, b1, b2, a1, a2 float64 }

// The analogue prototypes of BS.1770's two K-weighting stages, as the
// standard's 48 kHz coefficients imply them: a high shelf of about +4 dB
// (the head's acoustic effect) and a high-pass (the RLB curve). Bilinear
// transform of these gives the standard's table at 48 kHz (see the test)
// and the same curve at any other rate.
const (
	shelfFreq  = 1681.974450955533
	shelfGain  = 3.999843853973347 // dB
	shelfQ     = 0.7071752369554196
	shelfVbExp = 0.4996667741545416 // band gain exponent: Vb = Vh^exp
	rlbFreq    = 38.13547087602444
	rlbQ       = 0.5003270373238773
)

// kWeighting returns the two stages (shelf, then high-pass) at rate Hz.
func kWeighting(rate int) [2]biquad {
	k := math.Tan(math.Pi * shelfFreq / float64(rate))
	vh := math.Pow(10, shelfGain/20)
	vb := math.Pow(vh, shelfVbExp)
	a0 := 1 + k/shelfQ + k*k
	shelf := biquad{
		b0: (vh + vb*k/shelfQ + k*k) / a0,
		b1: 2 * (k*k - vh) / a0,
		b2: (vh - vb*k/shelfQ + k*k) / a0,
		a1: 2 * (k*k - 1) / a0,
		a2: (1 - k/shelfQ + k*k) / a0,
	}
	k = math.Tan(math.Pi * rlbFreq / float64(rate))
	a0 = 1 + k/rlbQ + k*k
	rlb := biquad{
		b0: 1, b1: -2, b2: 1,
		a1: 2 * (k*k - 1) / a0,
		a2: (1 - k/rlbQ + k*k) / a0,
	}
	return [2]biquad{shelf, rlb}
}

// kFilter runs the K-weighting over one channel, keeping its state between
// calls (direct form II transposed, in float64).
type kFilter struct {
	stages [2]biquad
	z      [2][2]float64
}

func newKFilter(rate int) *kFilter { return &kFilter{stages: kWeighting(rate)} }

// next filters one sample.
func (f *kFilter) next(x float64) float64 {
	for i := range f.stages {
		s, z := &f.stages[i], &f.z[i]
		y := s.b0*x + z[0]
		z[0] = s.b1*x - s.a1*y + z[1]
		z[1] = s.b2*x - s.a2*y
		x = y
	}
	return x
}

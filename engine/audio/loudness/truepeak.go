package loudness

import (
	"math"
	"runtime"
	"slices"
	"sync"
)

// The true-peak meter of BS.1770-4 Annex 2: oversample (×4 below 96 kHz,
// ×2 below 192 kHz) with a low-pass interpolator and take the largest
// magnitude. The standard's 48-tap filter is an example; ours is a
// Kaiser-windowed sinc of 16 taps per phase, whose phases each sum to 1,
// so a constant stays constant and phase 0 returns the samples themselves.
const (
	tapsPerPhase = 16
	kaiserBeta   = 7.0
)

// interpolators holds one filter bank per oversampling factor.
var interpolators sync.Map // int → [][]float64

// polyphase returns factor phases of tapsPerPhase taps: phase p estimates
// the signal p/factor of a sample after x[n] from x[n-7] … x[n+8].
func polyphase(factor int) [][]float64 {
	if f, ok := interpolators.Load(factor); ok {
		return f.([][]float64)
	}
	half := tapsPerPhase / 2
	phases := make([][]float64, factor)
	for p := range phases {
		frac := float64(p) / float64(factor)
		taps := make([]float64, tapsPerPhase)
		var sum float64
		for i := range taps {
			// Tap i weighs x[n + i - half + 1]; its distance from the point.
			t := float64(i-half+1) - frac
			w := kaiser(t / float64(half))
			taps[i] = sinc(t) * w
			sum += taps[i]
		}
		for i := range taps {
			taps[i] /= sum
		}
		phases[p] = taps
	}
	interpolators.Store(factor, phases)
	return phases
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// kaiser is the Kaiser window at x in [-1, 1] (0 outside).
func kaiser(x float64) float64 {
	if x <= -1 || x >= 1 {
		return 0
	}
	return bessel0(kaiserBeta*math.Sqrt(1-x*x)) / bessel0(kaiserBeta)
}

// bessel0 is the modified Bessel function I0 by its power series.
func bessel0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 50; k++ {
		term *= (x / (2 * float64(k))) * (x / (2 * float64(k)))
		sum += term
		if term < 1e-12*sum {
			break
		}
	}
	return sum
}

// oversampling is the factor BS.1770-4 asks for at rate.
func oversampling(rate int) int {
	switch {
	case rate < 96000:
		return 4
	case rate < 192000:
		return 2
	default:
		return 1
	}
}

// TruePeak returns the largest magnitude of the oversampled signal in dBTP
// (Silent for all zeros). Samples past either end count as zero. Long
// signals are measured in parts on every core (a scene of minutes: the
// largest magnitude is the same whichever part finds it).
func TruePeak(pcm []float32, rate int) float64 {
	phases := polyphase(oversampling(rate))
	parts := min(runtime.GOMAXPROCS(0), len(pcm)/minPartSamples)
	var peak float64
	if parts <= 1 {
		peak = truePeakOf(pcm, phases, 0, len(pcm))
	} else {
		peaks := make([]float64, parts)
		var wg sync.WaitGroup
		for k := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				peaks[k] = truePeakOf(pcm, phases, k*len(pcm)/parts, (k+1)*len(pcm)/parts)
			}()
		}
		wg.Wait()
		peak = slices.Max(peaks)
	}
	if peak == 0 {
		return Silent
	}
	return 20 * math.Log10(peak)
}

// minPartSamples is the least a part of TruePeak's work is worth a goroutine for.
const minPartSamples = 1 << 16

// truePeakOf is the largest oversampled magnitude around samples [from, to)
// of pcm (its interpolation reading pcm beyond them, zero past its ends).
func truePeakOf(pcm []float32, phases [][]float64, from, to int) float64 {
	half := tapsPerPhase / 2
	at := func(i int) float64 {
		if i < 0 || i >= len(pcm) {
			return 0
		}
		return float64(pcm[i])
	}
	var peak float64
	for n := from; n < to; n++ {
		if a := math.Abs(float64(pcm[n])); a > peak {
			peak = a
		}
		lo := n - half + 1
		inside := lo >= 0 && lo+tapsPerPhase <= len(pcm)
		for _, taps := range phases[1:] {
			var y float64
			if inside { // the common case, without a bounds test per tap
				w := pcm[lo : lo+tapsPerPhase]
				for i, c := range taps {
					y += c * float64(w[i])
				}
			} else {
				for i, c := range taps {
					y += c * at(lo+i)
				}
			}
			if a := math.Abs(y); a > peak {
				peak = a
			}
		}
	}
	return peak
}

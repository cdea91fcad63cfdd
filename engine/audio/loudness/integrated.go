package loudness

import (
	"errors"
	"fmt"
	"math"
)

// BS.1770-4's gating: 400 ms blocks overlapping by 75 % (a new block every
// 100 ms), an absolute gate at -70 LKFS and a relative gate 10 LU below the
// loudness of the blocks that pass the absolute one.
const (
	absoluteGate = -70.0
	relativeGate = -10.0
	// offset makes a 997 Hz sine in one channel read its RMS level
	// (the K-weighting's gain there, taken back).
	offset = -0.691
)

// ErrTooShort is returned for a programme shorter than one gating block.
var ErrTooShort = errors.New("too short to measure loudness: under 0.4 s of audio")

// Silent is the loudness of a programme whose every block is below the
// absolute gate: minus infinity, which callers must treat as "no level".
var Silent = math.Inf(-1)

// Integrated returns the gated loudness of a mono programme in LUFS
// (Silent when everything is gated out).
func Integrated(pcm []float32, rate int) (float64, error) {
	return IntegratedChannels([][]float32{pcm}, rate)
}

// IntegratedChannels measures channels played together (left, right,
// centre: each of weight 1; surround channels are not supported). All
// channels must have the same length.
func IntegratedChannels(channels [][]float32, rate int) (float64, error) {
	if rate < 8000 || rate > 384000 {
		return 0, fmt.Errorf("loudness: sample rate %d Hz is outside 8000–384000", rate)
	}
	if len(channels) == 0 || len(channels) > 3 {
		return 0, fmt.Errorf("loudness: %d channels: give 1 to 3 (left, right, centre)", len(channels))
	}
	n := len(channels[0])
	for i, c := range channels {
		if len(c) != n {
			return 0, fmt.Errorf("loudness: channel %d has %d samples, channel 0 has %d", i, len(c), n)
		}
	}
	step := int(math.Round(float64(rate) / 10)) // 100 ms
	if n < 4*step {
		return 0, ErrTooShort
	}
	// Mean square energy of every 100 ms step, channels summed (weight 1).
	steps := n / step
	energy := make([]float64, steps)
	for _, c := range channels {
		f := newKFilter(rate)
		for j := range steps {
			var sum float64
			for _, x := range c[j*step : (j+1)*step] {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return 0, fmt.Errorf("loudness: sample %d is not a finite number", j*step)
				}
				y := f.next(float64(x))
				sum += y * y
			}
			energy[j] += sum
		}
	}
	// A block is four consecutive steps.
	blocks := make([]float64, 0, steps-3)
	for j := 0; j+4 <= steps; j++ {
		z := (energy[j] + energy[j+1] + energy[j+2] + energy[j+3]) / float64(4*step)
		blocks = append(blocks, z)
	}
	mean := func(above float64) (float64, int) {
		var sum float64
		var kept int
		for _, z := range blocks {
			if blockLoudness(z) > above {
				sum += z
				kept++
			}
		}
		if kept == 0 {
			return 0, 0
		}
		return sum / float64(kept), kept
	}
	z, kept := mean(absoluteGate)
	if kept == 0 {
		return Silent, nil
	}
	z, kept = mean(blockLoudness(z) + relativeGate)
	if kept == 0 {
		return Silent, nil
	}
	return blockLoudness(z), nil
}

// blockLoudness turns a block's weighted mean square into LKFS.
func blockLoudness(z float64) float64 {
	if z <= 0 {
		return math.Inf(-1)
	}
	return offset + 10*math.Log10(z)
}

package takes

import "math"

// PeakBucket is how many samples one waveform bucket spans (11.6 ms at
// 44.1 kHz). Chunks start at multiples of 2048 samples, so the buckets of
// live chunks and of a whole take line up.
const PeakBucket = 512

// Peaks is a waveform at PeakBucket resolution: Values holds min, max per
// bucket, interleaved.
type Peaks struct {
	TakeID  int       `json:"take_id"`        // 0: not a take's (PeaksOf)
	Bucket  int       `json:"bucket_samples"` // samples per bucket
	Samples int       `json:"samples"`        // samples the values cover
	Values  []float32 `json:"values"`
}

// PeaksOf is pcm's waveform (a scene's, say): Values at PeakBucket
// resolution.
func PeaksOf(pcm []float32) Peaks {
	return Peaks{Bucket: PeakBucket, Samples: len(pcm), Values: peaksOf(pcm)}
}

// peaksOf returns min, max of each PeakBucket samples of pcm (the last
// bucket may be shorter).
func peaksOf(pcm []float32) []float32 {
	n := (len(pcm) + PeakBucket - 1) / PeakBucket
	out := make([]float32, 0, 2*n)
	for i := 0; i < len(pcm); i += PeakBucket {
		lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
		for _, v := range pcm[i:min(i+PeakBucket, len(pcm))] {
			lo, hi = min(lo, v), max(hi, v)
		}
		out = append(out, lo, hi)
	}
	return out
}

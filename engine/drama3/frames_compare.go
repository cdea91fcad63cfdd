package drama3

import "math"

// Helpers for comparing two backends' takes frame by frame (proscenium-gpu
// debug-take, the GPU backend's tests).

// MakeFrames runs up to n frames of the take begun on b (forced: the codes
// of each frame, teacher forcing, or nil) and returns the frames made and
// whether the take ended (end of speech) before n.
func MakeFrames(b FrameBackend, n int, forced [][]int) ([][]int, bool, error) {
	var frames [][]int
	for f := 0; f < n; f++ {
		codes := make([]int, len(b.CodebookEntries()))
		var fc []int
		if forced != nil {
			fc = forced[f]
		}
		end, err := b.Frame(codes, fc)
		if err != nil {
			return frames, false, err
		}
		if end {
			return frames, true, nil
		}
		frames = append(frames, codes)
	}
	return frames, false, nil
}

// LogitsLog keeps every logits vector a LogitsTap shows, by frame and
// codebook.
type LogitsLog map[[2]int][]float32

// Tap is a LogitsTap's function: it keeps a copy of logits.
func (l LogitsLog) Tap(frame, codebook int, logits []float32) {
	l[[2]int{frame, codebook}] = append([]float32(nil), logits...)
}

// LogitsDiff is max |a − b| over max |b|: how far one backend's logits
// vector is from the reference's, relative to the vector's scale.
func LogitsDiff(a, b []float32) float64 {
	_, rel := LogitsSpread(a, b)
	return rel
}

// LogitsSpread is max |a − b| itself (diff) beside LogitsDiff (rel), for
// a caller that needs both (a routing margin against the difference).
func LogitsSpread(a, b []float32) (diff, rel float64) {
	var scale float64
	for i := range a {
		diff = math.Max(diff, math.Abs(float64(a[i])-float64(b[i])))
		scale = math.Max(scale, math.Abs(float64(b[i])))
	}
	if scale == 0 {
		return diff, diff
	}
	return diff, diff / scale
}

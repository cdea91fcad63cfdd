package scene

import (
	"math"

	"proscenium/engine/audio/loudness"
)

// What the scene does to each take before joining them: with TrimSilence
// it cuts the take to where it speaks, and it applies the line's own gain.
//
// A take may begin with a moment of silence and end with a longer one
// (the model's pause before its end code). The scene's gap and the lines'
// pauses are meant as the silence between voices, so trimming cuts each
// take to where it speaks (speechIn: its first and last window within
// quietDB of its loudest), keeping a little on each side.
const (
	keepBeforeSeconds = 0.05 // before the first sound: a soft onset
	keepAfterSeconds  = 0.15 // after the last: its decay
)

// trimSilence is pcm from keepBeforeSeconds before its first sound to
// keepAfterSeconds after its last (a sub-slice; all of it when it has no
// quiet ends).
func trimSilence(pcm []float32, rate int) []float32 {
	speech, _ := speechIn(pcm, rate)
	from := max(0, speech.from-int(math.Round(keepBeforeSeconds*float64(rate))))
	to := min(len(pcm), speech.to+int(math.Round(keepAfterSeconds*float64(rate))))
	return pcm[from:to]
}

// prepared is lines with each take's silent ends cut (when trim) and its
// line's gain applied, to a copy: the takes' own audio is never changed.
func prepared(lines []Line, trim bool) []Line {
	out := make([]Line, len(lines))
	for i, l := range lines {
		out[i] = l
		if trim {
			out[i].PCM = trimSilence(l.PCM, l.Rate)
		}
		if l.GainDB != 0 {
			out[i].PCM = append([]float32(nil), out[i].PCM...)
			loudness.Apply(out[i].PCM, l.GainDB)
		}
	}
	return out
}

package scene

import "math"

// A line's cues are timed from its audio: the stretch where it speaks
// (its first and last loud window) and the pauses inside it, where a cue
// of a long line may end. The engine gives no word timings, so a cue
// boundary inside a line is placed by the share of the line's text before
// it and moved to the nearest pause.

const (
	windowSeconds = 0.010 // loudness is measured over 10 ms windows
	quietDB       = 40    // a window this far under the loudest is quiet
	pauseSeconds  = 0.150 // quiet windows this long together are a pause
	snapSeconds   = 1.0   // a boundary moves to a pause at most this far
	minCueSeconds = 1.0   // a shorter cue stays up longer, where there is room
)

// span is a stretch of samples [from, to).
type span struct{ from, to int }

func (s span) mid() int { return (s.from + s.to) / 2 }

// speechIn finds where pcm speaks (from the first loud window to the end
// of the last) and the pauses inside that. Audio with no loud window
// speaks throughout.
func speechIn(pcm []float32, rate int) (speech span, pauses []span) {
	w := max(1, int(math.Round(windowSeconds*float64(rate))))
	n := (len(pcm) + w - 1) / w
	power := make([]float64, n)
	loudest := 0.0
	for i := range power {
		var sum float64
		part := pcm[i*w : min(len(pcm), (i+1)*w)]
		for _, x := range part {
			sum += float64(x) * float64(x)
		}
		power[i] = sum / float64(len(part))
		loudest = max(loudest, power[i])
	}
	if loudest == 0 {
		return span{0, len(pcm)}, nil
	}
	floor := loudest * math.Pow(10, -quietDB/10.0)
	first, last := -1, -1
	for i, p := range power {
		if p > floor {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	speech = span{first * w, min(len(pcm), (last+1)*w)}
	minPause := int(math.Round(pauseSeconds / windowSeconds))
	quietFrom := -1
	for i := first; i <= last; i++ {
		switch {
		case power[i] <= floor && quietFrom < 0:
			quietFrom = i
		case power[i] > floor && quietFrom >= 0:
			if i-quietFrom >= minPause {
				pauses = append(pauses, span{quietFrom * w, i * w})
			}
			quietFrom = -1
		}
	}
	return speech, pauses
}

// placeCues times parts (a line's cue texts, in order) in its audio:
// samples from the start of the line, one span each. Each boundary
// between parts begins at the share of the text before it and moves to
// the nearest pause within snapSeconds that lies after the boundary before.
func placeCues(parts []string, pcm []float32, rate int) []span {
	speech, pauses := speechIn(pcm, rate)
	weights := make([]int, len(parts))
	total := 0
	for i, p := range parts {
		for _, r := range p {
			if r != ' ' && r != '\n' {
				weights[i]++
			}
		}
		weights[i] = max(1, weights[i])
		total += weights[i]
	}
	snap := int(snapSeconds * float64(rate))
	out := make([]span, len(parts))
	from, before := speech.from, 0
	for i := range parts {
		before += weights[i]
		to := speech.to
		if i < len(parts)-1 {
			to = speech.from + int(float64(speech.to-speech.from)*float64(before)/float64(total))
			best := -1
			for j, p := range pauses {
				m := p.mid()
				if m > from && abs(m-to) <= snap && (best < 0 || abs(m-to) < abs(pauses[best].mid()-to)) {
					best = j
				}
			}
			if best >= 0 {
				to = pauses[best].mid()
			}
			to = min(max(to, from+1), speech.to)
		}
		out[i] = span{from, to}
		from = to
	}
	return out
}

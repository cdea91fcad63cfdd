// Package enginetest is a speech engine for the studio's tests: it speaks a
// known signal at once, so tests of takes, export and the transports can
// check every sample without a model; and a voice cache that logs what it
// is asked to prime (VoiceCache). Only tests import it.
package enginetest

import (
	"context"
	"math"

	"proscenium/engine/api"
)

// PCM makes Frames frames of a known signal (Signal) and emits them in the
// engine's chunk policy (1, 2, 4, … frames), like the real loop; frame f's
// codes are f, f+1.
type PCM struct {
	Frames int
}

// SamplesPerFrame is PCM's frame: SampleRate samples a second.
const (
	SamplesPerFrame = 2048
	SampleRate      = 44100
)

// Signal is sample i of a PCM take: never zero, inside (−1, 1).
func Signal(i int) float32 {
	return float32(0.5*math.Sin(float64(i)*0.01) + 0.25*math.Copysign(1, math.Sin(float64(i)*0.003)+1e-9))
}

func (e *PCM) Info() api.Info {
	return api.Info{Model: "pcm", Backend: "cpu", SampleRate: SampleRate, SamplesPerFrame: SamplesPerFrame, Codebooks: 2}
}

func (e *PCM) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	n := min(e.Frames, req.MaxFrames)
	codes := make([][]int, n)
	for from, size := 0, 1; from < n; size = min(2*size, 32) {
		to := min(from+size, n)
		for f := from; f < to; f++ {
			codes[f] = []int{f, f + 1}
			emit(api.Event{Kind: api.EventFrames, Frames: f + 1})
		}
		pcm := make([]float32, (to-from)*SamplesPerFrame)
		for i := range pcm {
			pcm[i] = Signal(from*SamplesPerFrame + i)
		}
		emit(api.Event{Kind: api.EventAudio, Audio: &api.AudioChunk{FromFrame: from, ToFrame: to, PCM: pcm}})
		from = to
	}
	reason := api.FinishStop
	if n == req.MaxFrames {
		reason = api.FinishLength
	}
	secs := float64(n*SamplesPerFrame) / SampleRate
	return &api.Finish{Reason: reason, Frames: n, AudioS: secs, ElapsedS: 0.001,
		RealTimeFactor: 0.001 / secs, TimeToFirstAudioMs: 0.001, Codes: codes, Batch: 1}, nil
}

func (e *PCM) Stats() api.Stats {
	return api.Stats{Memory: api.Memory{Device: "host", Used: 1}}
}
func (e *PCM) Close() error { return nil }

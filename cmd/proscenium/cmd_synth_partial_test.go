package main

import (
	"context"
	"errors"
	"testing"

	"proscenium/engine/api"
)

// dyingEngine delivers two frames of audio, then fails as a killed worker does.
type dyingEngine struct{}

func (dyingEngine) Info() api.Info { return api.Info{SampleRate: 44100, SamplesPerFrame: 4} }
func (dyingEngine) Synthesize(ctx context.Context, req api.SpeechRequest, emit func(api.Event)) (*api.Finish, error) {
	emit(api.Event{Kind: api.EventAudio, Audio: &api.AudioChunk{FromFrame: 0, ToFrame: 2, PCM: make([]float32, 8)}})
	return nil, errors.New("GPU worker (pid 42) died: signal: killed")
}
func (dyingEngine) Stats() api.Stats { return api.Stats{} }
func (dyingEngine) Close() error     { return nil }

// A take that fails midway returns its error and the audio made before it.
func TestRunTakeKeepsTheAudioOfAFailedTake(t *testing.T) {
	pcm, fin, err := runTake(dyingEngine{}, api.SpeechRequest{Text: "x", Sampling: api.DefaultSampling(), MaxFrames: 10}, nil)
	if err == nil || fin != nil || len(pcm) != 8 {
		t.Fatalf("pcm %d samples, finish %v, err %v; want 8 samples and the worker's error", len(pcm), fin, err)
	}
}

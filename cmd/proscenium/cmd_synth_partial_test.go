package main

import (
	"context"
	"errors"
	"testing"

	"proscenium/engine"
)

// dyingEngine delivers two frames of audio, then fails as a killed worker does.
type dyingEngine struct{}

func (dyingEngine) Info() engine.Info { return engine.Info{SampleRate: 44100, SamplesPerFrame: 4} }
func (dyingEngine) Synthesize(ctx context.Context, req engine.SpeechRequest, emit func(engine.Event)) (*engine.Finish, error) {
	emit(engine.Event{Kind: engine.EventAudio, Audio: &engine.AudioChunk{FromFrame: 0, ToFrame: 2, PCM: make([]float32, 8)}})
	return nil, errors.New("GPU worker (pid 42) died: signal: killed")
}
func (dyingEngine) Stats() engine.Stats { return engine.Stats{} }
func (dyingEngine) Close() error        { return nil }

// A take that fails midway returns its error and the audio made before it.
func TestRunTakeKeepsTheAudioOfAFailedTake(t *testing.T) {
	pcm, fin, err := runTake(dyingEngine{}, engine.SpeechRequest{Text: "x", Sampling: engine.DefaultSampling(), MaxFrames: 10}, nil)
	if err == nil || fin != nil || len(pcm) != 8 {
		t.Fatalf("pcm %d samples, finish %v, err %v; want 8 samples and the worker's error", len(pcm), fin, err)
	}
}

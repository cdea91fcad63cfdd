package drama3

import (
	"context"
	"time"

	"proscenium/engine/sampling"
)

// This file is the contract between the take loop (Generate) and a backend:
// one call per frame, sampling inside the backend, the take's codes and the
// codec's history kept by the backend. A GPU backend implements it with the
// whole frame on the device (one graph per frame, sampling device-side); the
// CPU backend with StepFrames over its fine-grained steps and the host
// sampler: the reference, which a device backend follows draw for draw (up to
// the last-bit rounding docs/MODEL.md describes under Sampler).

// FrameBackend makes the frames of one take at a time. Calls come from one
// goroutine: Begin, then Frame until the loop stops, with Decode of frames
// already made in between.
type FrameBackend interface {
	// CodebookEntries is the number of entries of each codebook, codebook 0
	// (semantic) first. End of speech is semantic logit index
	// CodebookEntries()[0].
	CodebookEntries() []int

	// SamplesPerFrame is the codec's samples per frame.
	SamplesPerFrame() int

	// Begin starts a take: it clears every cache and the kept codes, runs
	// the prompt through the backbone and all but its last row through the
	// tower (text rows, code mask 0), and prepares frame 0's semantic
	// logits. It checks ctx between chunks of prompt rows and returns
	// ctx.Err() when it stopped early. s and seed drive every draw of the
	// take: code c of frame f draws Uniform(seed, f, c).
	Begin(ctx context.Context, prompt []int, s sampling.Settings, seed uint64) error

	// Frame makes the next frame into codes (len(CodebookEntries())): from
	// frame 1 on, the previous frame's feedback row through the backbone;
	// code 0 drawn from the semantic logits (end of speech: end = true, the
	// frame is not kept); the shared tower layers; each residual layer
	// followed by its draw. forced, when not nil, is teacher forcing: those
	// codes are used instead of drawn (end of speech never happens).
	Frame(codes, forced []int) (end bool, err error)

	// Decode returns the PCM of frames [from, to) of this take, exactly
	// those frames' samples of a whole decode. Chunks asked for in order
	// cost only their own frames.
	Decode(from, to int) ([]float32, error)

	// Close releases the backend's memory; later calls fail.
	Close() error
}

// LogitsTap is implemented by backends that can show the logits of every
// draw (proscenium debug take, stage comparisons): while tap is set, each
// logits vector is passed to it before the draw, codebook 0's with end of
// speech last. tap must not keep the slice. nil switches it off.
type LogitsTap interface {
	TapLogits(tap func(frame, codebook int, logits []float32))
}

// StageTimer is implemented by backends that time the parts of a frame:
// the durations since the last Begin, by stage name (Stage*).
type StageTimer interface {
	StageTimes() map[string]time.Duration
}

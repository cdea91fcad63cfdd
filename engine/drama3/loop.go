package drama3

import (
	"context"
	"fmt"
	"time"

	"proscenium/engine/sampling"
)

// This file holds the take loop of MODEL.md §3, independent of the backend:
// it drives a FrameBackend frame by frame, decides when the take ends (end
// of speech, max frames, the caller's stop), streams decoded chunks by the
// chunk policy, and keeps the codes and the figures.

// PromptBackend is a FrameBackend that also takes prompts with reference
// frames (audio rows, a reference-voice prompt): BeginPrompt is Begin for
// such a prompt.
type PromptBackend interface {
	BeginPrompt(ctx context.Context, p Prompt, s sampling.Settings, seed uint64) error
}

// Finish reasons, the one definition (package engine re-exports them for the
// engine API).
const (
	FinishStop   = "stop"   // end of speech was sampled
	FinishLength = "length" // max frames reached; the audio is kept
	FinishCancel = "cancel" // the caller stopped the take; the audio so far is kept
)

// Stage names of Result.Stages.
const (
	StagePrefill  = "prefill"  // Begin: prompt through backbone and tower
	StageFrame    = "frame"    // Frame calls, when the backend does not time their parts
	StageSample   = "sample"   // every draw (StageTimer backends)
	StageTower    = "tower"    // shared and residual tower layers (StageTimer backends)
	StageBackbone = "backbone" // feedback row through the backbone (StageTimer backends)
	StageCodec    = "codec"    // Decode
)

// Take is one generation request in token ids.
type Take struct {
	Prompt []int
	// Rows, when it has audio rows (a reference-voice prompt), is the
	// prompt as rows; Prompt then holds its tokens. The backend must be a
	// PromptBackend.
	Rows      Prompt
	Sampling  sampling.Settings
	Seed      uint64
	MaxFrames int
	Chunks    ChunkPolicy // zero value: DefaultChunkPolicy
	Start     time.Time   // when the request arrived (zero: when Generate starts)
}

// Listener receives a take's progress in order: after each frame Frames, and
// whenever a chunk is decoded Audio. Either may be nil. Logits, when set, sees
// every logits vector the sampler reads (codebook 0's includes end of speech)
// before the draw; it must not keep the slice; the backend must be a
// LogitsTap.
type Listener struct {
	Frames func(made int)
	Audio  func(from, to int, pcm []float32)
	Logits func(frame, codebook int, logits []float32)
}

// Result is how a take ended.
type Result struct {
	Reason           string  // FinishStop, FinishLength or FinishCancel
	Codes            [][]int // [frame][codebook]
	TimeToFirstAudio time.Duration
	Elapsed          time.Duration
	Stages           map[string]time.Duration
}

// Generate runs one take on b. Cancelling ctx ends the take before the next
// frame starts, or within the prefill: the frames made so far are decoded
// and kept, and the result's reason is FinishCancel. An error from the
// backend ends the take with that error and no result.
func Generate(ctx context.Context, b FrameBackend, take Take, on Listener) (*Result, error) {
	start := take.Start
	if start.IsZero() {
		start = time.Now()
	}
	entries := b.CodebookEntries()
	if len(entries) < 2 {
		return nil, fmt.Errorf("generate: backend reports %d codebooks, need at least 2", len(entries))
	}
	if len(take.Prompt) == 0 {
		return nil, fmt.Errorf("generate: empty prompt")
	}
	if take.MaxFrames < 1 {
		return nil, fmt.Errorf("generate: max_frames %d must be at least 1", take.MaxFrames)
	}
	policy := take.Chunks
	if policy == (ChunkPolicy{}) {
		policy = DefaultChunkPolicy()
	}
	chunker, err := NewChunker(policy)
	if err != nil {
		return nil, err
	}
	if on.Logits != nil {
		tap, ok := b.(LogitsTap)
		if !ok {
			return nil, fmt.Errorf("generate: this backend cannot show logits")
		}
		tap.TapLogits(on.Logits)
		defer tap.TapLogits(nil)
	}

	res := &Result{Stages: map[string]time.Duration{}}
	timed := func(stage string, f func() error) error {
		t0 := time.Now()
		err := f()
		res.Stages[stage] += time.Since(t0)
		return err
	}
	finish := func() {
		if st, ok := b.(StageTimer); ok {
			for k, v := range st.StageTimes() {
				res.Stages[k] += v
			}
			delete(res.Stages, StageFrame)
		}
		res.Elapsed = time.Since(start)
	}
	out := newAudioOut(b, timed, func(from, to int, pcm []float32) {
		if res.TimeToFirstAudio == 0 {
			res.TimeToFirstAudio = time.Since(start)
		}
		if on.Audio != nil {
			on.Audio(from, to, pcm)
		}
	})

	if ctx.Err() != nil { // stopped while queued: skip the prefill
		res.Reason = FinishCancel
		finish()
		return res, nil
	}
	begin := func() error { return b.Begin(ctx, take.Prompt, take.Sampling, take.Seed) }
	if take.Rows.AudioRows() > 0 {
		pb, ok := b.(PromptBackend)
		if !ok {
			return nil, fmt.Errorf("prefill: this backend does not take reference voices yet")
		}
		begin = func() error { return pb.BeginPrompt(ctx, take.Rows, take.Sampling, take.Seed) }
	}
	if err := timed(StagePrefill, begin); err != nil {
		if ctx.Err() != nil {
			res.Reason = FinishCancel
			finish()
			return res, nil
		}
		return nil, fmt.Errorf("prefill: %w", err)
	}
	for frame := 0; ; frame++ {
		if ctx.Err() != nil {
			res.Reason = FinishCancel
			break
		}
		if frame == take.MaxFrames {
			res.Reason = FinishLength
			break
		}
		codes := make([]int, len(entries))
		var end bool
		if err := timed(StageFrame, func() (err error) {
			end, err = b.Frame(codes, nil)
			return err
		}); err != nil {
			return nil, err
		}
		// The chunk started after the last frame decoded while this frame
		// was made.
		if err := out.collect(); err != nil {
			return nil, err
		}
		if end {
			res.Reason = FinishStop
			break
		}
		res.Codes = append(res.Codes, codes)
		if on.Frames != nil {
			on.Frames(len(res.Codes))
		}
		if from, to, ok := chunker.Next(len(res.Codes)); ok {
			if err := out.chunk(from, to); err != nil {
				return nil, err
			}
		}
	}
	if from, to, ok := chunker.Rest(len(res.Codes)); ok {
		if err := out.chunk(from, to); err != nil {
			return nil, err
		}
	}
	if err := out.collect(); err != nil {
		return nil, err
	}
	finish()
	return res, nil
}

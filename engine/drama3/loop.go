package drama3

import (
	"context"
	"fmt"
	"math"
	"time"
)

// This file holds the generation loop of MODEL.md §3, independent of the
// backend: prompt prefill, then per frame the semantic code (or end of
// speech), the tower's residual codes, the feedback row into the backbone,
// and streamed decoding. A Backend does the arithmetic; the loop owns the
// sampling decisions, the order of the steps, the finish reasons and the
// figures.

// Backend is what the loop drives: one backbone with its caches, the
// codebook tower with its caches and the codec. Implementations own their
// device state; the loop calls them from one goroutine.
type Backend interface {
	// CodebookEntries is the number of entries of each codebook, codebook 0
	// (semantic) first. Semantic logits have CodebookEntries()[0]+1 values:
	// the last one is end of speech.
	CodebookEntries() []int

	// Begin starts a take: it clears every cache, runs the prompt rows
	// through the backbone and through the tower (text rows, code mask 0) for
	// every row but the last, and writes the semantic logits of the last row.
	Begin(prompt []int, semantic []float32) error

	// TowerShared runs the shared tower layers over the current row with
	// codebook 0 = code0 embedded.
	TowerShared(code0 int) error

	// TowerResidual runs residual tower layer j (1 ≤ j < codebooks) over the
	// current row with codebook j−1 = prev embedded and writes the logits of
	// codebook j.
	TowerResidual(j, prev int, logits []float32) error

	// Advance appends the feedback row of a frame's codes to the backbone
	// and writes the semantic logits of the new row.
	Advance(codes []int, semantic []float32) error

	// Decode returns the PCM of frames [from, to) given every frame made so
	// far (frames[i] holds frame i's codes, codebook 0 first); it must equal
	// those frames' samples of a whole decode.
	Decode(frames [][]int, from, to int) ([]float32, error)
}

// PromptBackend is a Backend that also takes prompts with reference frames
// (audio rows): BeginPrompt is Begin for such a prompt.
type PromptBackend interface {
	BeginPrompt(p Prompt, semantic []float32) error
}

// Finish reasons (the engine API's spellings).
const (
	FinishStop   = "stop"   // end of speech was sampled
	FinishLength = "length" // max frames reached; the audio is kept
	FinishCancel = "cancel" // the caller stopped the take; the audio so far is kept
)

// Stage names of Result.Stages.
const (
	StagePrefill  = "prefill"  // Begin: prompt through backbone and tower
	StageSample   = "sample"   // every sampler call
	StageTower    = "tower"    // TowerShared + TowerResidual
	StageBackbone = "backbone" // Advance: feedback row through the backbone
	StageCodec    = "codec"    // Decode
)

// Take is one generation request in token ids.
type Take struct {
	Prompt []int
	// Rows, when it has audio rows (a reference-voice prompt), is the
	// prompt as rows; Prompt then holds its tokens. The backend must be a
	// PromptBackend.
	Rows      Prompt
	Sampling  Sampling
	Seed      uint64
	MaxFrames int
	Chunks    ChunkPolicy // zero value: DefaultChunkPolicy
	Start     time.Time   // when the request arrived (zero: when Generate starts)
}

// Listener receives a take's progress in order: after each frame Frames, and
// whenever a chunk is decoded Audio. Either may be nil. Logits, when set, sees
// every logits vector the sampler reads (codebook 0's includes end of speech)
// before the draw; it must not keep the slice.
type Listener struct {
	Frames func(made int)
	Audio  func(from, to int, pcm []float32)
	Logits func(frame, codebook int, logits []float32)
}

// Result is how a take ended.
type Result struct {
	Reason           string
	Codes            [][]int // [frame][codebook]
	TimeToFirstAudio time.Duration
	Elapsed          time.Duration
	Stages           map[string]time.Duration
}

// Generate runs one take on b. Cancelling ctx ends the take before the next
// frame starts: the frames made so far are decoded and kept, and the result's
// reason is FinishCancel. An error from the backend or the sampler ends the
// take with that error and no result.
func Generate(ctx context.Context, b Backend, take Take, on Listener) (*Result, error) {
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
		return nil, fmt.Errorf("generate: max frames %d must be at least 1", take.MaxFrames)
	}
	sampler, err := NewSampler(take.Sampling, take.Seed)
	if err != nil {
		return nil, err
	}
	policy := take.Chunks
	if policy == (ChunkPolicy{}) {
		policy = DefaultChunkPolicy()
	}
	chunker, err := NewChunker(policy)
	if err != nil {
		return nil, err
	}

	res := &Result{Stages: map[string]time.Duration{}}
	timed := func(stage string, f func() error) error {
		t0 := time.Now()
		err := f()
		res.Stages[stage] += time.Since(t0)
		return err
	}
	emit := func(from, to int) error {
		var pcm []float32
		if err := timed(StageCodec, func() (err error) {
			pcm, err = b.Decode(res.Codes, from, to)
			return err
		}); err != nil {
			return fmt.Errorf("decode frames [%d, %d): %w", from, to, err)
		}
		if res.TimeToFirstAudio == 0 {
			res.TimeToFirstAudio = time.Since(start)
		}
		if on.Audio != nil {
			on.Audio(from, to, pcm)
		}
		return nil
	}
	sample := func(logits []float32, frame, cb int) (code int, err error) {
		if on.Logits != nil {
			on.Logits(frame, cb, logits)
		}
		err = timed(StageSample, func() (err error) {
			code, err = sampler.Sample(logits, frame, cb)
			return err
		})
		if err != nil {
			err = fmt.Errorf("frame %d codebook %d: %w", frame, cb, err)
		}
		return code, err
	}

	if ctx.Err() != nil { // stopped while queued: skip the prefill
		res.Reason, res.Elapsed = FinishCancel, time.Since(start)
		return res, nil
	}
	// Logits buffers are poisoned with NaN before each backend call: a value
	// the backend fails to write makes the sampler fail, naming the draw.
	semantic := make([]float32, entries[0]+1)
	endOfSpeech := entries[0]
	poison(semantic)
	begin := func() error { return b.Begin(take.Prompt, semantic) }
	if take.Rows.AudioRows() > 0 {
		pb, ok := b.(PromptBackend)
		if !ok {
			return nil, fmt.Errorf("prefill: this backend does not take reference voices yet")
		}
		begin = func() error { return pb.BeginPrompt(take.Rows, semantic) }
	}
	if err := timed(StagePrefill, begin); err != nil {
		return nil, fmt.Errorf("prefill: %w", err)
	}
	largest := 0
	for _, n := range entries[1:] {
		largest = max(largest, n)
	}
	residualBuf := make([]float32, largest)
	for frame := 0; ; frame++ {
		if ctx.Err() != nil {
			res.Reason = FinishCancel
			break
		}
		if frame == take.MaxFrames {
			res.Reason = FinishLength
			break
		}
		if frame > 0 {
			prev := res.Codes[frame-1]
			poison(semantic)
			if err := timed(StageBackbone, func() error { return b.Advance(prev, semantic) }); err != nil {
				return nil, fmt.Errorf("frame %d: backbone: %w", frame, err)
			}
		}
		c0, err := sample(semantic, frame, 0)
		if err != nil {
			return nil, err
		}
		if c0 == endOfSpeech {
			res.Reason = FinishStop
			break
		}
		codes := make([]int, len(entries))
		codes[0] = c0
		if err := timed(StageTower, func() error { return b.TowerShared(c0) }); err != nil {
			return nil, fmt.Errorf("frame %d: tower: %w", frame, err)
		}
		for j := 1; j < len(entries); j++ {
			residual := residualBuf[:entries[j]]
			poison(residual)
			if err := timed(StageTower, func() error { return b.TowerResidual(j, codes[j-1], residual) }); err != nil {
				return nil, fmt.Errorf("frame %d: tower layer for codebook %d: %w", frame, j, err)
			}
			if codes[j], err = sample(residual, frame, j); err != nil {
				return nil, err
			}
		}
		res.Codes = append(res.Codes, codes)
		if on.Frames != nil {
			on.Frames(len(res.Codes))
		}
		if from, to, ok := chunker.Next(len(res.Codes)); ok {
			if err := emit(from, to); err != nil {
				return nil, err
			}
		}
	}
	if from, to, ok := chunker.Rest(len(res.Codes)); ok {
		if err := emit(from, to); err != nil {
			return nil, err
		}
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// poison fills logits with NaN.
func poison(logits []float32) {
	nan := float32(math.NaN())
	for i := range logits {
		logits[i] = nan
	}
}

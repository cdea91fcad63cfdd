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
	// Batch is the most takes that made a frame in one step with this one
	// (1: it ran alone; 0: it made no frame).
	Batch int
	// Prefix is what the prefill did with the prompt's voice prefix; nil
	// when the backend keeps no voice cache (TakePrefixCacher).
	Prefix *PrefixOutcome
}

// Generate runs one take on b. Cancelling ctx ends the take before the next
// frame starts, or within the prefill: the frames made so far are decoded
// and kept, and the result's reason is FinishCancel. An error from the
// backend ends the take with that error and no result.
func Generate(ctx context.Context, b FrameBackend, take Take, on Listener) (*Result, error) {
	set := single(b)
	run, err := NewTakeRun(set, 0, take, on)
	if err != nil {
		return nil, err
	}
	defer set.End(0)
	live, err := run.Prefill(ctx)
	if err != nil {
		return nil, err
	}
	for live && run.Due(ctx) {
		step := []TakeFrame{run.NextFrame()}
		t0 := time.Now()
		if err := set.Step(step); err != nil {
			return nil, err
		}
		if live, err = run.Took(step[0], time.Since(t0), 1); err != nil {
			return nil, err
		}
	}
	return run.Finish()
}

// TakeRun is one take's loop over a TakeSet, whoever schedules the steps:
// it begins the take, decides when it ends (end of speech, max frames, the
// caller's stop), streams decoded chunks by the chunk policy, and keeps the
// codes and the figures. Its methods are called from the set's goroutine:
// Prefill; while Due, the take's NextFrame goes into a Step and its result
// to Took; then Finish (or Fail after an error).
type TakeRun struct {
	set     TakeSet
	id      TakeID
	take    Take
	on      Listener
	entries []int
	chunker *Chunker
	out     *audioOut // the chunks to the listener, decoded at once or behind the next frame
	res     *Result
	start   time.Time
	live    bool // begun in the set and not yet ended
}

// NewTakeRun checks take and on against set; the take starts with Prefill.
func NewTakeRun(set TakeSet, id TakeID, take Take, on Listener) (*TakeRun, error) {
	start := take.Start
	if start.IsZero() {
		start = time.Now()
	}
	entries := set.CodebookEntries()
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
	if tap, ok := set.(TakeLogitsTap); on.Logits != nil && (!ok || !tap.TapsLogits()) {
		return nil, fmt.Errorf("generate: this backend cannot show logits")
	}
	r := &TakeRun{set: set, id: id, take: take, on: on, entries: entries, chunker: chunker,
		res: &Result{Stages: map[string]time.Duration{}}, start: start}
	var async AsyncDecoder
	var ready func() bool
	if a, ok := set.(TakeAsyncDecoder); ok && a.DecodesAsync() {
		async = takeAsync{set: a, id: id}
		if rd, ok := set.(TakeDecodeReadier); ok {
			ready = func() bool { return rd.DecodeReady(id) }
		}
	}
	timed := func(stage string, f func() error) error {
		t0 := time.Now()
		err := f()
		r.res.Stages[stage] += time.Since(t0)
		return err
	}
	r.out = newAudioOut(func(from, to int) ([]float32, error) { return set.Decode(id, from, to) }, async, ready, timed,
		func(from, to int, pcm []float32) {
			if r.res.TimeToFirstAudio == 0 {
				r.res.TimeToFirstAudio = time.Since(r.start)
			}
			if r.on.Audio != nil {
				r.on.Audio(from, to, pcm)
			}
		})
	return r, nil
}

// ID is the take's id in the set.
func (r *TakeRun) ID() TakeID { return r.id }

// Prefill begins the take in the set (its prompt through the backbone and
// the tower), checking ctx. live is false when ctx ended first: the take is
// over with FinishCancel (Finish gives its result). An error fails the
// take; it is not live.
func (r *TakeRun) Prefill(ctx context.Context) (live bool, err error) {
	st, ok := r.Start(ctx)
	if !ok {
		return false, nil
	}
	t0 := time.Now()
	err = r.set.Begin(ctx, r.id, st.Prompt, st.Settings, st.Seed)
	return r.Begun(ctx, err, time.Since(t0))
}

// Start is the take's part of a TakeSet.BeginMany (the first half of
// Prefill, for a scheduler that begins several takes at once; Begun is the
// second): ok is false when ctx ended while the take waited (it is over
// with FinishCancel: Finish next).
func (r *TakeRun) Start(ctx context.Context) (st TakeStart, ok bool) {
	if ctx.Err() != nil { // stopped while queued: skip the prefill
		r.res.Reason = FinishCancel
		return TakeStart{}, false
	}
	p := r.take.Rows
	if p.AudioRows() == 0 {
		p = TextPrompt(r.take.Prompt)
	}
	return TakeStart{Ctx: ctx, ID: r.id, Prompt: p, Settings: r.take.Sampling, Seed: r.take.Seed}, true
}

// Begun takes the outcome of the take's begin (err, which took d): as
// Prefill's.
func (r *TakeRun) Begun(ctx context.Context, err error, d time.Duration) (live bool, _ error) {
	r.res.Stages[StagePrefill] += d
	if err != nil {
		if ctx.Err() != nil {
			r.res.Reason = FinishCancel
			return false, nil
		}
		return false, fmt.Errorf("prefill: %w", err)
	}
	r.live = true
	if c, ok := r.set.(TakePrefixCacher); ok {
		if out, ok := c.TakePrefix(r.id); ok {
			r.res.Prefix = &out
		}
	}
	if r.on.Logits != nil {
		if err := r.set.(TakeLogitsTap).TapTakeLogits(r.id, r.on.Logits); err != nil {
			r.Fail()
			return false, fmt.Errorf("generate: %w", err)
		}
	}
	return true, nil
}

// PrefillMany begins runs (each with its context in ctxs) in one
// TakeSet.BeginMany: Prefill of each, for takes that arrived together.
func PrefillMany(set TakeSet, runs []*TakeRun, ctxs []context.Context) (live []bool, errs []error) {
	live, errs = make([]bool, len(runs)), make([]error, len(runs))
	var starts []TakeStart
	var which []int
	for i, r := range runs {
		if st, ok := r.Start(ctxs[i]); ok {
			starts = append(starts, st)
			which = append(which, i)
		}
	}
	if len(starts) == 0 {
		return live, errs
	}
	t0 := time.Now()
	begun := set.BeginMany(starts)
	d := time.Since(t0)
	for k, i := range which {
		live[i], errs[i] = runs[i].Begun(ctxs[i], begun[k], d)
	}
	return live, errs
}

// Due reports whether the take wants another frame; when not, the reason
// is set (the caller stopped it, or max frames).
func (r *TakeRun) Due(ctx context.Context) bool {
	switch {
	case ctx.Err() != nil:
		r.res.Reason = FinishCancel
	case len(r.res.Codes) == r.take.MaxFrames:
		r.res.Reason = FinishLength
	default:
		return true
	}
	return false
}

// NextFrame is the take's part of the next Step.
func (r *TakeRun) NextFrame() TakeFrame {
	return TakeFrame{ID: r.id, Codes: make([]int, len(r.entries))}
}

// Took takes the take's part of a Step that took step and ran batch takes
// together: the frame is kept and streamed. live is false when the take
// ended (end of speech: Finish next); an error fails it (Fail next).
func (r *TakeRun) Took(f TakeFrame, step time.Duration, batch int) (live bool, err error) {
	r.res.Stages[StageFrame] += step
	r.res.Batch = max(r.res.Batch, batch)
	if f.Err != nil {
		return false, f.Err
	}
	// The chunk started after an earlier frame decoded while this frame
	// was made: delivered now if done (or if the backend cannot tell).
	if err := r.out.collectReady(); err != nil {
		return false, err
	}
	if f.End {
		r.res.Reason = FinishStop
		return false, nil
	}
	r.res.Codes = append(r.res.Codes, f.Codes)
	if r.on.Frames != nil {
		r.on.Frames(len(r.res.Codes))
	}
	if from, to, ok := r.chunker.Next(len(r.res.Codes)); ok {
		if err := r.out.chunk(from, to); err != nil {
			return false, err
		}
	}
	return true, nil
}

// Finish decodes the frames not yet streamed, collects the figures and
// ends the take in the set.
func (r *TakeRun) Finish() (*Result, error) {
	defer r.Fail()
	if from, to, ok := r.chunker.Rest(len(r.res.Codes)); ok {
		if err := r.out.chunk(from, to); err != nil {
			return nil, err
		}
	}
	if err := r.out.collect(); err != nil {
		return nil, err
	}
	if st, ok := r.set.(TakeStageTimer); ok && r.live {
		if times := st.TakeStageTimes(r.id); times != nil {
			for k, v := range times {
				r.res.Stages[k] += v
			}
			delete(r.res.Stages, StageFrame)
		}
	}
	r.res.Elapsed = time.Since(r.start)
	return r.res, nil
}

// Fail ends the take in the set without a result (after an error).
func (r *TakeRun) Fail() {
	if r.live {
		r.live = false
		r.set.End(r.id)
	}
}

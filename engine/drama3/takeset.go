package drama3

import (
	"context"
	"fmt"
	"time"

	"proscenium/engine/sampling"
)

// This file is the frame contract over a set of live takes: each take is
// begun by id with its own prompt, settings and seed (its prefill), one
// call advances every live take named by one frame, and decode and end are
// per take. The take loop (TakeRun) and the scheduler that admits takes
// (engine/take) drive it; a backend keeps each live take's state apart
// (caches, sampler counters, codec stream), so a take's codes do not depend
// on the others it ran beside. Interleave implements it over per-take
// FrameBackends, frame by frame in turn; a backend with batched kernels
// would run one step for all of them.

// TakeID names a live take of a TakeSet; the caller chooses it.
type TakeID uint64

// TakeFrame is one take's part of a Step: the caller sets ID and Codes
// (len(CodebookEntries()), written by Step); Step sets End (end of speech
// was drawn: the frame is not kept) or Err (this take failed; it must be
// ended, the others go on).
type TakeFrame struct {
	ID    TakeID
	Codes []int
	End   bool
	Err   error
}

// TakeStart is one take of TakeSet.BeginMany: Begin's arguments.
type TakeStart struct {
	Ctx      context.Context // the take's own: its caller's stop
	ID       TakeID
	Prompt   Prompt
	Settings sampling.Settings
	Seed     uint64
}

// BeginEach is BeginMany as Begin of each take in turn, for sets that
// prefill one take at a time.
func BeginEach(set TakeSet, starts []TakeStart) []error {
	errs := make([]error, len(starts))
	for i, st := range starts {
		errs[i] = set.Begin(st.Ctx, st.ID, st.Prompt, st.Settings, st.Seed)
	}
	return errs
}

// RealTimeBounded is a TakeSet whose takes stepped together share a
// resource each take adds to, so that enough of them make every one slower
// than real time: under a host memory tier each take's rows read their own
// experts over the bus, and the step grows about in proportion to the takes,
// with no gain in audio made per second. The scheduler then lets a take join
// the live ones only while the steps it has measured predict each take's
// step within RealTimeBound of a frame's audio.
type RealTimeBounded interface {
	// RealTimeBound is the real-time factor a step of the live takes must
	// stay within for another take to join them (0: no bound).
	RealTimeBound() float64
}

// TakeSet makes the frames of several takes at once. Calls come from one
// goroutine.
type TakeSet interface {
	// CodebookEntries and SamplesPerFrame are FrameBackend's.
	CodebookEntries() []int
	SamplesPerFrame() int

	// Capacity is the most takes that can be live at once.
	Capacity() int

	// Begin starts take id (not live) on prompt p: FrameBackend.Begin, or
	// PromptBackend.BeginPrompt when p has reference frames, with that
	// take's own state. An error leaves id not live.
	Begin(ctx context.Context, id TakeID, p Prompt, s sampling.Settings, seed uint64) error

	// BeginMany begins several takes that arrived together, each as Begin
	// (its own context, prompt, settings and seed): errs[i] is starts[i]'s,
	// and a take refused or stopped fails alone. A set with batched
	// kernels prefills them in joint passes (their rows read every weight
	// once); the others begin each in turn (BeginEach). A take's codes are
	// those it makes begun alone.
	BeginMany(starts []TakeStart) (errs []error)

	// Step makes the next frame of every take in frames (each live,
	// each once), as FrameBackend.Frame. A non-nil error is the whole
	// set's (a device fault): every take in frames has failed.
	Step(frames []TakeFrame) error

	// Decode is FrameBackend.Decode of take id's frames.
	Decode(id TakeID, from, to int) ([]float32, error)

	// End releases take id's state for another take; ending a take that is
	// not live does nothing.
	End(id TakeID)

	// Close releases everything; later calls fail.
	Close() error
}

// TakeLogitsTap is implemented by sets that can show a live take's logits
// (LogitsTap per take) when TapsLogits says so; nil switches it off, End
// too.
type TakeLogitsTap interface {
	TapsLogits() bool
	TapTakeLogits(id TakeID, tap func(frame, codebook int, logits []float32)) error
}

// TakeStageTimer is implemented by sets that time the parts of a take's
// frames (StageTimer per take): the durations since its Begin.
type TakeStageTimer interface {
	TakeStageTimes(id TakeID) map[string]time.Duration
}

// beginTake starts b on p: Begin for text rows, BeginPrompt (when b takes
// one) for a prompt with reference frames.
func beginTake(ctx context.Context, b FrameBackend, p Prompt, s sampling.Settings, seed uint64) error {
	if p.AudioRows() == 0 {
		return b.Begin(ctx, p.Tokens(), s, seed)
	}
	pb, ok := b.(PromptBackend)
	if !ok {
		return fmt.Errorf("this backend does not take reference voices yet")
	}
	return pb.BeginPrompt(ctx, p, s, seed)
}

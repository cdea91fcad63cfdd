package drama3

import (
	"context"
	"fmt"
	"math"
	"time"

	"proscenium/engine/sampling"
)

// This file is the reference frame: a FrameBackend built from a backend's
// fine-grained steps and the host sampler. The CPU backend is this over its
// arithmetic; tests drive the steps directly (teacher forcing, probes).

// Stepper is a backend's fine-grained steps: one backbone with its caches,
// the codebook tower with its caches and the codec. Calls come from one
// goroutine.
type Stepper interface {
	// CodebookEntries is the number of entries of each codebook, codebook 0
	// first. Semantic logits have CodebookEntries()[0]+1 values: the last
	// one is end of speech.
	CodebookEntries() []int

	// SamplesPerFrame is the codec's samples per frame.
	SamplesPerFrame() int

	// Begin clears every cache, runs the prompt rows through the backbone
	// and all but the last through the tower (text rows, code mask 0),
	// checking ctx between chunks of rows, and writes the semantic logits
	// of the last row.
	Begin(ctx context.Context, prompt []int, semantic []float32) error

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

// StepFrames is a FrameBackend over a Stepper: it keeps the take's codes,
// draws with the host Sampler, and times the steps (StageTimer).
type StepFrames struct {
	s        Stepper
	close    func() error
	entries  []int
	sampler  *Sampler
	semantic []float32
	residual []float32
	codes    [][]int
	begun    bool
	tap      func(frame, codebook int, logits []float32)
	stages   map[string]time.Duration
}

var (
	_ FrameBackend  = (*StepFrames)(nil)
	_ PromptBackend = (*StepFrames)(nil)
	_ LogitsTap     = (*StepFrames)(nil)
	_ StageTimer    = (*StepFrames)(nil)
	_ PrefixCacher  = (*StepFrames)(nil)
)

// NewStepFrames wraps s; closeFn (may be nil) releases it on Close.
func NewStepFrames(s Stepper, closeFn func() error) (*StepFrames, error) {
	entries := s.CodebookEntries()
	if len(entries) < 2 {
		return nil, fmt.Errorf("backend reports %d codebooks, need at least 2", len(entries))
	}
	largest := 0
	for _, n := range entries[1:] {
		largest = max(largest, n)
	}
	return &StepFrames{s: s, close: closeFn, entries: entries,
		semantic: make([]float32, entries[0]+1), residual: make([]float32, largest)}, nil
}

// Stepper is the wrapped steps (tests, probes).
func (f *StepFrames) Stepper() Stepper { return f.s }

func (f *StepFrames) CodebookEntries() []int { return f.entries }

func (f *StepFrames) SamplesPerFrame() int { return f.s.SamplesPerFrame() }

func (f *StepFrames) TapLogits(tap func(frame, codebook int, logits []float32)) { f.tap = tap }

func (f *StepFrames) StageTimes() map[string]time.Duration { return f.stages }

func (f *StepFrames) timed(stage string, do func() error) error {
	t0 := time.Now()
	err := do()
	f.stages[stage] += time.Since(t0)
	return err
}

// Begin validates the settings, then runs the prompt (Stepper.Begin).
func (f *StepFrames) Begin(ctx context.Context, prompt []int, s sampling.Settings, seed uint64) error {
	return f.begin(s, seed, len(prompt), func() error { return f.s.Begin(ctx, prompt, f.semantic) })
}

// PromptStepper is a Stepper that also takes prompts with reference frames:
// BeginPrompt is Begin for such a prompt (cpu.Backend).
type PromptStepper interface {
	BeginPrompt(ctx context.Context, p Prompt, semantic []float32) error
}

// PrefixCache is the steps' voice prefix cache (nil when they keep none).
func (f *StepFrames) PrefixCache() *PrefixCache {
	if c, ok := f.s.(PrefixCacher); ok {
		return c.PrefixCache()
	}
	return nil
}

// PrefixKeyOf is the steps' cache's (false when they keep none).
func (f *StepFrames) PrefixKeyOf(p Prompt) (PrefixKey, bool) {
	if c, ok := f.s.(PrefixCacher); ok {
		return c.PrefixKeyOf(p)
	}
	return PrefixKey{}, false
}

// LastPrefix is what the steps' last BeginPrompt did with the voice prefix.
func (f *StepFrames) LastPrefix() PrefixOutcome {
	if c, ok := f.s.(PrefixCacher); ok {
		return c.LastPrefix()
	}
	return PrefixOutcome{}
}

// BeginPrompt is Begin for a reference-voice prompt, when the steps take
// one (PromptStepper).
func (f *StepFrames) BeginPrompt(ctx context.Context, p Prompt, s sampling.Settings, seed uint64) error {
	ps, ok := f.s.(PromptStepper)
	if !ok {
		return fmt.Errorf("this backend does not take reference voices yet")
	}
	return f.begin(s, seed, len(p), func() error { return ps.BeginPrompt(ctx, p, f.semantic) })
}

func (f *StepFrames) begin(s sampling.Settings, seed uint64, rows int, run func() error) error {
	f.begun, f.codes, f.stages = false, f.codes[:0], map[string]time.Duration{}
	sampler, err := NewSampler(s, seed)
	if err != nil {
		return err
	}
	if rows == 0 {
		return fmt.Errorf("empty prompt")
	}
	f.sampler = sampler
	// Logits buffers are poisoned with NaN before each step: a value the
	// step fails to write makes the sampler fail, naming the draw.
	poison(f.semantic)
	if err := run(); err != nil {
		return err
	}
	f.begun = true
	return nil
}

// Frame makes the next frame (FrameBackend). After an error the take is
// over: the caches are mid-frame.
func (f *StepFrames) Frame(codes, forced []int) (end bool, err error) {
	defer func() {
		if err != nil {
			f.begun = false
		}
	}()
	if !f.begun {
		return false, fmt.Errorf("frame before Begin")
	}
	n := len(f.entries)
	if len(codes) != n || (forced != nil && len(forced) != n) {
		return false, fmt.Errorf("frame: %d codes, %d forced; the model has %d codebooks", len(codes), len(forced), n)
	}
	for j, c := range forced {
		if c < 0 || c >= f.entries[j] {
			return false, fmt.Errorf("frame: forced code %d outside codebook %d's [0, %d)", c, j, f.entries[j])
		}
	}
	frame := len(f.codes)
	if frame > 0 {
		prev := f.codes[frame-1]
		poison(f.semantic)
		if err := f.timed(StageBackbone, func() error { return f.s.Advance(prev, f.semantic) }); err != nil {
			return false, fmt.Errorf("frame %d: backbone: %w", frame, err)
		}
	}
	draw := func(logits []float32, cb int) (int, error) {
		if f.tap != nil {
			f.tap(frame, cb, logits)
		}
		if forced != nil {
			return forced[cb], nil
		}
		var code int
		err := f.timed(StageSample, func() (err error) {
			code, err = f.sampler.Sample(logits, frame, cb)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("frame %d codebook %d: %w", frame, cb, err)
		}
		return code, nil
	}
	c0, err := draw(f.semantic, 0)
	if err != nil {
		return false, err
	}
	if c0 == f.entries[0] {
		return true, nil
	}
	row := make([]int, n)
	row[0] = c0
	if err := f.timed(StageTower, func() error { return f.s.TowerShared(c0) }); err != nil {
		return false, fmt.Errorf("frame %d: tower: %w", frame, err)
	}
	for j := 1; j < n; j++ {
		logits := f.residual[:f.entries[j]]
		poison(logits)
		if err := f.timed(StageTower, func() error { return f.s.TowerResidual(j, row[j-1], logits) }); err != nil {
			return false, fmt.Errorf("frame %d: tower layer for codebook %d: %w", frame, j, err)
		}
		if row[j], err = draw(logits, j); err != nil {
			return false, err
		}
	}
	f.codes = append(f.codes, row)
	copy(codes, row)
	return false, nil
}

// Decode decodes frames [from, to) of the kept codes.
func (f *StepFrames) Decode(from, to int) ([]float32, error) {
	if from < 0 || to > len(f.codes) || from >= to {
		return nil, fmt.Errorf("decode: frames [%d, %d) of a take of %d", from, to, len(f.codes))
	}
	return f.s.Decode(f.codes, from, to)
}

// Close releases the stepper.
func (f *StepFrames) Close() error {
	f.begun = false
	if f.close != nil {
		return f.close()
	}
	return nil
}

// poison fills logits with NaN.
func poison(logits []float32) {
	nan := float32(math.NaN())
	for i := range logits {
		logits[i] = nan
	}
}

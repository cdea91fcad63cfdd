package drama3

import (
	"context"
	"fmt"
	"time"

	"proscenium/engine/sampling"
)

// This file is the TakeSet of backends without batched kernels: each live
// take has a FrameBackend of its own (its caches and codec stream; the
// weights are shared by whoever makes them), and a step runs the takes'
// frames one after the other. A take's frames are then exactly those it
// makes alone: nothing passes between the backends.

// Interleave is a TakeSet over per-take FrameBackends.
type Interleave struct {
	newBackend func() (FrameBackend, error) // nil: only the backends given
	capacity   int
	owned      bool // Close closes the backends
	backends   []FrameBackend
	idle       []int          // indices into backends free for a take
	live       map[TakeID]int // take → its backend
	entries    []int
	// What the first backend says of all of them, read once: callers ask
	// from their own goroutines while Begin may grow backends.
	first           FrameBackend
	samplesPerFrame int
	async           bool
	closed          bool
}

var (
	_ TakeSet          = (*Interleave)(nil)
	_ TakeLogitsTap    = (*Interleave)(nil)
	_ TakeStageTimer   = (*Interleave)(nil)
	_ TakeAsyncDecoder = (*Interleave)(nil)
	_ TakePrefixCacher = (*Interleave)(nil)
)

// NewInterleave makes a set of up to capacity live takes; first is the
// first take's backend, newBackend makes another (sharing first's weights)
// when more takes are live than backends exist. The set owns every backend
// (Close closes them, first last). newBackend may be nil when capacity is 1.
func NewInterleave(first FrameBackend, newBackend func() (FrameBackend, error), capacity int) (*Interleave, error) {
	if first == nil {
		return nil, fmt.Errorf("interleave: no backend")
	}
	if capacity < 1 || (capacity > 1 && newBackend == nil) {
		return nil, fmt.Errorf("interleave: capacity %d needs a way to make a backend per take", capacity)
	}
	s := single(first)
	s.newBackend, s.capacity, s.owned = newBackend, capacity, true
	return s, nil
}

// single is the set of one take on b, which the caller keeps (Generate).
func single(b FrameBackend) *Interleave {
	_, async := b.(AsyncDecoder)
	return &Interleave{capacity: 1, backends: []FrameBackend{b}, idle: []int{0},
		live: map[TakeID]int{}, entries: b.CodebookEntries(), first: b, samplesPerFrame: b.SamplesPerFrame(), async: async}
}

func (s *Interleave) CodebookEntries() []int { return s.entries }
func (s *Interleave) SamplesPerFrame() int   { return s.samplesPerFrame }
func (s *Interleave) Capacity() int          { return s.capacity }

// Backends is how many per-take backends exist (at most Capacity): they are
// made as takes need them and kept for the next.
func (s *Interleave) Backends() int { return len(s.backends) }

// Begin implements TakeSet.
func (s *Interleave) Begin(ctx context.Context, id TakeID, p Prompt, sm sampling.Settings, seed uint64) error {
	if s.closed {
		return fmt.Errorf("take set: closed")
	}
	if _, ok := s.live[id]; ok {
		return fmt.Errorf("take set: take %d is already live", id)
	}
	if len(s.idle) == 0 {
		if len(s.backends) >= s.capacity {
			return fmt.Errorf("take set: %d takes are live, the most it holds", len(s.live))
		}
		b, err := s.newBackend()
		if err != nil {
			return fmt.Errorf("take set: a backend for take %d: %w", id, err)
		}
		s.backends = append(s.backends, b)
		s.idle = append(s.idle, len(s.backends)-1)
	}
	slot := s.idle[len(s.idle)-1]
	if err := beginTake(ctx, s.backends[slot], p, sm, seed); err != nil {
		return err
	}
	s.idle = s.idle[:len(s.idle)-1]
	s.live[id] = slot
	return nil
}

// BeginMany implements TakeSet: each take in turn (BeginEach).
func (s *Interleave) BeginMany(starts []TakeStart) []error { return BeginEach(s, starts) }

// Step implements TakeSet: each take's frame in turn, in the order given.
func (s *Interleave) Step(frames []TakeFrame) error {
	for i := range frames {
		f := &frames[i]
		slot, ok := s.live[f.ID]
		if !ok {
			f.Err = fmt.Errorf("take set: take %d is not live", f.ID)
			continue
		}
		f.End, f.Err = s.backends[slot].Frame(f.Codes, nil)
	}
	return nil
}

// Decode implements TakeSet.
func (s *Interleave) Decode(id TakeID, from, to int) ([]float32, error) {
	slot, ok := s.live[id]
	if !ok {
		return nil, fmt.Errorf("take set: take %d is not live", id)
	}
	return s.backends[slot].Decode(from, to)
}

// End implements TakeSet.
func (s *Interleave) End(id TakeID) {
	slot, ok := s.live[id]
	if !ok {
		return
	}
	if tap, ok := s.backends[slot].(LogitsTap); ok {
		tap.TapLogits(nil)
	}
	delete(s.live, id)
	s.idle = append(s.idle, slot)
}

// DecodesAsync implements TakeAsyncDecoder: whether the backends are
// AsyncDecoders.
func (s *Interleave) DecodesAsync() bool { return s.async }

// asyncOf is take id's backend as an AsyncDecoder.
func (s *Interleave) asyncOf(id TakeID) (AsyncDecoder, error) {
	slot, ok := s.live[id]
	if !ok {
		return nil, fmt.Errorf("take set: take %d is not live", id)
	}
	a, ok := s.backends[slot].(AsyncDecoder)
	if !ok {
		return nil, fmt.Errorf("take set: this backend decodes at once only")
	}
	return a, nil
}

// DecodeStart implements TakeAsyncDecoder.
func (s *Interleave) DecodeStart(id TakeID, from, to int) error {
	a, err := s.asyncOf(id)
	if err != nil {
		return err
	}
	return a.DecodeStart(from, to)
}

// DecodeReady implements TakeDecodeReadier: the take's backend's answer
// when it is a DecodeReadier, else true (collect now, waiting if need be).
func (s *Interleave) DecodeReady(id TakeID) bool {
	a, err := s.asyncOf(id)
	if err != nil {
		return true // DecodeCollect reports the error
	}
	if r, ok := a.(DecodeReadier); ok {
		return r.DecodeReady()
	}
	return true
}

// DecodeCollect implements TakeAsyncDecoder.
func (s *Interleave) DecodeCollect(id TakeID) ([]float32, error) {
	a, err := s.asyncOf(id)
	if err != nil {
		return nil, err
	}
	return a.DecodeCollect()
}

// PrefixCache implements TakePrefixCacher: the voice cache the takes'
// backends share (the first's; nil: none).
func (s *Interleave) PrefixCache() *PrefixCache {
	if c, ok := s.first.(PrefixCacher); ok {
		return c.PrefixCache()
	}
	return nil
}

// PrefixKeyOf implements TakePrefixCacher: the shared cache's key (the
// first backend's).
func (s *Interleave) PrefixKeyOf(p Prompt) (PrefixKey, bool) {
	if c, ok := s.first.(PrefixCacher); ok {
		return c.PrefixKeyOf(p)
	}
	return PrefixKey{}, false
}

// TakePrefix implements TakePrefixCacher.
func (s *Interleave) TakePrefix(id TakeID) (PrefixOutcome, bool) {
	slot, ok := s.live[id]
	if !ok {
		return PrefixOutcome{}, false
	}
	c, ok := s.backends[slot].(PrefixCacher)
	if !ok || c.PrefixCache() == nil {
		return PrefixOutcome{}, false
	}
	return c.LastPrefix(), true
}

// TapsLogits implements TakeLogitsTap: whether the backends are LogitsTaps.
func (s *Interleave) TapsLogits() bool {
	_, ok := s.first.(LogitsTap)
	return ok
}

// TapTakeLogits implements TakeLogitsTap; it fails when the backends are
// not LogitsTaps.
func (s *Interleave) TapTakeLogits(id TakeID, tap func(frame, codebook int, logits []float32)) error {
	slot, ok := s.live[id]
	if !ok {
		return fmt.Errorf("take set: take %d is not live", id)
	}
	t, ok := s.backends[slot].(LogitsTap)
	if !ok {
		return fmt.Errorf("this backend cannot show logits")
	}
	t.TapLogits(tap)
	return nil
}

// TakeStageTimes implements TakeStageTimer when the backends are
// StageTimers (nil otherwise).
func (s *Interleave) TakeStageTimes(id TakeID) map[string]time.Duration {
	if slot, ok := s.live[id]; ok {
		if t, ok := s.backends[slot].(StageTimer); ok {
			return t.StageTimes()
		}
	}
	return nil
}

// Close implements TakeSet; the first backend is left open when the caller
// kept it (Generate).
func (s *Interleave) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if !s.owned {
		return nil
	}
	// The takes' backends close before the first's: theirs may borrow its
	// weights.
	var first error
	for i := len(s.backends) - 1; i >= 0; i-- {
		if err := s.backends[i].Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

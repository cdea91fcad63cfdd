package drama3

import "fmt"

// This file holds the streaming policy: which frames the codec decodes
// together. The first frame is decoded alone so the earliest audio leaves as
// soon as possible; later groups grow (doubling) up to a cap so the codec's
// per-call overhead shrinks while playback stays ahead. Every chunk is the
// whole decode's samples for its frames: that exactness is the codec's
// streaming contract, the policy only picks the boundaries.

// ChunkPolicy sets the chunk sizes in frames: First, then each chunk Growth
// times the previous one, never more than Max.
type ChunkPolicy struct {
	First  int
	Growth int
	Max    int
}

// DefaultChunkPolicy decodes 1, 2, 4, 8, 16, 32, 32, … frames (32 frames is
// 1.49 s of audio at 44.1 kHz and 2048 samples per frame).
func DefaultChunkPolicy() ChunkPolicy { return ChunkPolicy{First: 1, Growth: 2, Max: 32} }

// Validate refuses a policy that cannot make progress.
func (p ChunkPolicy) Validate() error {
	if p.First < 1 || p.Growth < 1 || p.Max < p.First {
		return fmt.Errorf("chunk policy %+v: need First ≥ 1, Growth ≥ 1, Max ≥ First", p)
	}
	return nil
}

// Chunker tracks which frames have been decoded and says when the next chunk
// is due.
type Chunker struct {
	policy  ChunkPolicy
	size    int // frames in the next chunk
	decoded int // frames [0, decoded) have been handed out
}

// NewChunker starts at frame 0.
func NewChunker(p ChunkPolicy) (*Chunker, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Chunker{policy: p, size: p.First}, nil
}

// Next reports the next chunk [from, to) once made frames exist to fill it;
// the caller decodes it. ok is false while the chunk is not yet full.
func (c *Chunker) Next(made int) (from, to int, ok bool) {
	if made-c.decoded < c.size {
		return 0, 0, false
	}
	from, to = c.decoded, c.decoded+c.size
	c.decoded = to
	c.size = min(c.size*c.policy.Growth, c.policy.Max)
	return from, to, true
}

// Rest reports the frames made but not yet handed out, when the take ends.
func (c *Chunker) Rest(made int) (from, to int, ok bool) {
	if made <= c.decoded {
		return 0, 0, false
	}
	from, to = c.decoded, made
	c.decoded = made
	return from, to, true
}

package cpu

import "math"

// CodecScratch holds the intermediate buffers of codec decodes so that a
// streaming caller does not allocate them again for every chunk. Buffers are
// handed out with arbitrary contents: every stage writes each value it later
// reads (the tests poison the buffers with NaN to prove it). A CodecScratch
// serves one decode at a time.
type CodecScratch struct {
	free [][]float32 // buffers not in use
	all  [][]float32 // every buffer ever made, for poisoning in tests
	// poisonNew makes new buffers start as NaN (tests).
	poisonNew bool
}

// get returns a buffer of n values, reusing the smallest free one that fits.
func (s *CodecScratch) get(n int) []float32 {
	best := -1
	for i, b := range s.free {
		if cap(b) >= n && (best < 0 || cap(b) < cap(s.free[best])) {
			best = i
		}
	}
	if best >= 0 {
		b := s.free[best][:n]
		s.free = append(s.free[:best], s.free[best+1:]...)
		return b
	}
	b := make([]float32, n)
	if s.poisonNew {
		fillNaN(b)
	}
	s.all = append(s.all, b)
	return b
}

// put returns a buffer for reuse.
func (s *CodecScratch) put(b []float32) { s.free = append(s.free, b[:0]) }

// signal returns a window [start, start+n) × ch backed by a scratch buffer.
func (s *CodecScratch) signal(start, n, ch int) codecSignal {
	return codecSignal{start: start, n: n, ch: ch, data: s.get(n * ch)}
}

func (s *CodecScratch) release(sig codecSignal) { s.put(sig.data) }

// poison fills every buffer with NaN (tests).
func (s *CodecScratch) poison() {
	for _, b := range s.all {
		fillNaN(b[:cap(b)])
	}
}

func fillNaN(b []float32) {
	nan := float32(math.NaN())
	for i := range b {
		b[i] = nan
	}
}

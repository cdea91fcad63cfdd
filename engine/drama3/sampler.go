package drama3

import (
	"fmt"
	"math"
	"slices"

	"proscenium/engine/sampling"
)

// This file holds the sampler of MODEL.md §3: temperature, then top-p over the
// whole vocabulary, then top-k, then one draw from the Philox uniform of
// (seed, frame, codebook). Its arithmetic is the definition both backends
// follow; the CUDA backend copies the logits back and calls the same code.

// Sampler draws codes for one take. It keeps scratch space between draws and
// is not safe for concurrent use.
type Sampler struct {
	settings sampling.Settings
	seed     uint64
	order    []int
	weight   []float64
}

// NewSampler returns a sampler keyed by seed, refusing settings it cannot
// honour (sampling.Settings.Validate: its precondition, as a constructor
// others call directly; the engine checked a request's already).
func NewSampler(settings sampling.Settings, seed uint64) (*Sampler, error) {
	if err := settings.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{settings: settings, seed: seed}, nil
}

// Sample picks an index of logits for codebook cb of frame f with the draw
// Uniform(seed, f, cb).
func (s *Sampler) Sample(logits []float32, frame, codebook int) (int, error) {
	return s.SampleWith(logits, Uniform(s.seed, frame, codebook))
}

// SampleWith picks an index of logits with the uniform number u in [0, 1).
// The arithmetic, in order (all in float64 unless said):
//
//  1. Every logit must be finite, else an error.
//  2. Temperature 0: the index of the largest logit, the lowest index on ties.
//  3. Order the indices by logit, largest first, equal logits by lower index
//     (a strict total order; dividing by a positive temperature keeps it).
//  4. w_i = exp(l_i/T − l_max/T) with l_max the first index's logit.
//  5. Z = Σ w_i summed sequentially in index order (0, 1, 2, …).
//  6. Top-p (TopP < 1): keep the first n indices of the order where n is the
//     smallest count whose running sum (sequential, in order) is ≥ TopP·Z;
//     at least one.
//  7. Top-k (TopK > 0): n = min(n, TopK).
//  8. Z' = Σ of the n kept weights, sequentially in order; target = u·Z'.
//  9. Walk the kept indices accumulating w; return the first whose running
//     sum exceeds target (the last kept index if rounding leaves none).
//
// Only the first TopK indices of the order are ever needed: with top-k on,
// they are selected without sorting the whole vocabulary.
func (s *Sampler) SampleWith(logits []float32, u float64) (int, error) {
	if len(logits) == 0 {
		return 0, fmt.Errorf("sampling: no logits")
	}
	for i, l := range logits {
		if math.IsNaN(float64(l)) || math.IsInf(float64(l), 0) {
			return 0, fmt.Errorf("sampling: logit %d is %v (the model produced a non-finite value)", i, l)
		}
	}
	if !(u >= 0 && u < 1) {
		return 0, fmt.Errorf("sampling: uniform draw %v outside [0, 1)", u)
	}
	if s.settings.Temperature == 0 {
		best := 0
		for i, l := range logits {
			if l > logits[best] {
				best = i
			}
		}
		return best, nil
	}

	n := len(logits)
	limit := n
	if s.settings.TopK > 0 && s.settings.TopK < n {
		limit = s.settings.TopK
	}
	s.order = leadingOrder(s.order[:0], logits, limit)

	temp := float64(s.settings.Temperature)
	sMax := float64(logits[s.order[0]]) / temp
	var z float64
	for _, l := range logits {
		z += math.Exp(float64(l)/temp - sMax)
	}
	s.weight = slices.Grow(s.weight[:0], limit)[:limit]
	for j, idx := range s.order {
		s.weight[j] = math.Exp(float64(logits[idx])/temp - sMax)
	}

	kept := limit
	if s.settings.TopP < 1 {
		need := float64(s.settings.TopP) * z
		var run float64
		for j := 0; j < limit; j++ {
			run += s.weight[j]
			if run >= need {
				kept = j + 1
				break
			}
		}
	}

	var zKept float64
	for j := 0; j < kept; j++ {
		zKept += s.weight[j]
	}
	target := u * zKept
	var run float64
	for j := 0; j < kept; j++ {
		run += s.weight[j]
		if target < run {
			return s.order[j], nil
		}
	}
	return s.order[kept-1], nil
}

// before is the sampler's strict order: larger logit first, then lower index.
func before(logits []float32, a, b int) bool {
	return logits[a] > logits[b] || logits[a] == logits[b] && a < b
}

// leadingOrder appends to dst the first k indices of the strict order,
// in order. With k < len(logits) it keeps a k-entry heap whose root is the
// last of the kept (O(n log k)), then sorts those k.
func leadingOrder(dst []int, logits []float32, k int) []int {
	cmp := func(a, b int) int {
		if before(logits, a, b) {
			return -1
		}
		if before(logits, b, a) {
			return 1
		}
		return 0
	}
	n := len(logits)
	if k >= n {
		for i := 0; i < n; i++ {
			dst = append(dst, i)
		}
		slices.SortFunc(dst, cmp)
		return dst
	}
	h := dst
	// siftDown restores the heap property (parent comes after its children
	// in the order, so the root is the last kept) from position i.
	siftDown := func(i int) {
		for {
			c := 2*i + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && before(logits, h[c], h[c+1]) {
				c++
			}
			if !before(logits, h[i], h[c]) {
				return
			}
			h[i], h[c] = h[c], h[i]
			i = c
		}
	}
	for i := 0; i < k; i++ {
		h = append(h, i)
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDown(i)
	}
	for i := k; i < n; i++ {
		if before(logits, i, h[0]) {
			h[0] = i
			siftDown(0)
		}
	}
	slices.SortFunc(h, cmp)
	return h
}

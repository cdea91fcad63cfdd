package drama3

import (
	"math"
	"slices"

	"proscenium/engine/sampling"
)

// This file judges a draw that two backends made differently: whether the
// draw lay so close to one of its boundaries that the difference of their
// logits (or of their summation order) explains it. The device tests and
// `proscenium-gpu debug-take` use it to tell a near-tie from a fault.

// RoundingTieMargin is the relative distance below which a draw's boundary
// counts as a rounding tie of two summation orders: far above float64's
// 1e-16, far below any real margin.
const RoundingTieMargin = 1e-9

// DrawMargin is the smallest relative distance, in the CPU sampler's
// sequential float64 arithmetic, between a running sum and the value it is
// compared with (top-p's need, the draw's target u) around the decisions of
// the draw of logits under s: how far the draw lay from picking another
// code. Greedy draws have no such margin (+Inf).
func DrawMargin(logits []float32, s sampling.Settings, u float64) float64 {
	if s.Temperature == 0 {
		return math.Inf(1)
	}
	n := len(logits)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case logits[a] > logits[b] || logits[a] == logits[b] && a < b:
			return -1
		case logits[a] == logits[b] && a == b:
			return 0
		}
		return 1
	})
	limit := n
	if s.TopK > 0 && s.TopK < n {
		limit = s.TopK
	}
	temp := float64(s.Temperature)
	smax := float64(logits[order[0]]) / temp
	var z float64
	for _, l := range logits {
		z += math.Exp(float64(l)/temp - smax)
	}
	w := make([]float64, limit)
	for j := range w {
		w[j] = math.Exp(float64(logits[order[j]])/temp - smax)
	}
	margin := math.Inf(1)
	kept := limit
	if s.TopP < 1 {
		need := float64(s.TopP) * z
		var run float64
		for j := 0; j < limit; j++ {
			run += w[j]
			margin = min(margin, math.Abs(run-need)/z)
			if run >= need {
				kept = j + 1
				break
			}
		}
	}
	var zk float64
	for _, v := range w[:kept] {
		zk += v
	}
	target := u * zk
	var run float64
	for j := 0; j < kept; j++ {
		run += w[j]
		margin = min(margin, math.Abs(run-target)/zk)
		if target < run {
			break
		}
	}
	return margin
}

// NearTie reports whether a draw of ref's logits under s with target u that
// gave refCode, and gave otherCode on another backend whose logits were
// other, is explained by the difference of the logits, d = max |other − ref|
// (0 when they have the same bits): either the draw lay within bound of one
// of its boundaries (margin = DrawMargin; each weight exp(l/T) moves by at
// most a factor e^(d/T), so each running sum relative to its total by at
// most about 2d/T: bound = 4d/T + RoundingTieMargin), or the two codes'
// logits lie within 2d of each other (near-equal logits that swapped places
// in the sorted order). Greedy draws flip only by such a swap.
func NearTie(ref, other []float32, s sampling.Settings, u float64, refCode, otherCode int) (ok bool, margin, bound float64) {
	d := 0.0
	for i := range ref {
		d = max(d, math.Abs(float64(other[i])-float64(ref[i])))
	}
	swapped := math.Abs(float64(ref[refCode])-float64(ref[otherCode])) <= 2*d
	if s.Temperature == 0 {
		return swapped, math.Inf(1), 0
	}
	margin, bound = DrawMargin(ref, s, u), RoundingTieMargin+4*d/float64(s.Temperature)
	return margin <= bound || swapped, margin, bound
}

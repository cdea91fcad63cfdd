package cpu

import (
	"math"
)

// This file is the backbone's routing tap: what made a backend that sums
// the router logits in another order choose another expert. Routing is a
// discontinuity of the backbone: where a row's k-th and (k+1)-th best
// router logits lie within the router logits' rounding error of each other,
// a backend summing in another order (the GPU's fast float32 GEMV) may
// choose the other expert, and from there its hidden states and logits
// differ by far more than rounding (docs/PERF.md "norm34", session 12 run
// 4: 4 ulps at the last layer, a 0.63 logit difference). The tap reports
// each row's margin at that boundary; a forced swap replays the other
// choice (route_explain.go uses both).

// RouteMargin is one row's routing at one layer: the margin at its top-k
// boundary, between the k-th expert route chose (its smallest probability)
// and the best expert it did not choose.
type RouteMargin struct {
	Pos   int `json:"pos"`   // the row's position in the take's sequence (prompt rows 0…P−1, then one a step)
	Layer int `json:"layer"` // the backbone layer
	// Kth is the k-th chosen expert, Next the best unchosen one (both by
	// route's order: probability, ties to the lower index).
	Kth       int     `json:"kth_expert"`
	Next      int     `json:"next_expert"`
	KthLogit  float32 `json:"kth_logit"`
	NextLogit float32 `json:"next_logit"`
	// Margin is KthLogit − NextLogit (≥ 0 but where the float32 softmax
	// made two near-equal logits equal probabilities: then as small as an
	// ulp and of either sign); Rel is |Margin| over the larger |logit|.
	Margin float64 `json:"margin"`
	Rel    float64 `json:"relative_margin"`
	// Scale is Σ_i |w_Kth,i·x_i| + Σ_i |w_Next,i·x_i| (float64): the size
	// of the two dot products' terms, which bounds a float32 sum's error
	// in any order (RouteGammaBound). Width is their length (Hidden).
	Scale float64 `json:"scale"`
	Width int     `json:"width"`
	// Logits is every router logit of the row: valid only during the
	// call, a copy must be kept.
	Logits []float32 `json:"-"`
}

// RouteSwap forces route's k-th expert Out to give way to In (the best
// unchosen expert, normally) at one row and layer: the routing a backend
// whose rounding ordered the two the other way makes. Weights are the
// softmax probabilities of the new set renormalised, as route's are.
type RouteSwap struct {
	Pos, Layer, Out, In int
}

// RouteTap observes and (for a replay) changes the backbone's routing.
type RouteTap struct {
	// Margin, when set, sees every row's RouteMargin in every layer.
	Margin func(RouteMargin)
	// Swaps are forced at their rows and layers (Out must be chosen there
	// and In not: otherwise the row keeps route's choice).
	Swaps []RouteSwap
}

// SetRouteTap sets the backbone's routing tap (nil: none, no cost).
func (b *Backend) SetRouteTap(t *RouteTap) { b.backbone.Route = t }

// routeRows is a tap bound to one moeForward call: the layer and the
// position of its first row.
type routeRows struct {
	tap          *RouteTap
	layer, pos0  int
	experts, hid int
}

// routeRows is the tap for layer li of the run appending rows at b.pos
// (nil without a tap).
func (b *Backbone) routeRows(li int) *routeRows {
	if b.Route == nil {
		return nil
	}
	return &routeRows{tap: b.Route, layer: li, pos0: b.pos, experts: b.cfg.NumExperts, hid: b.cfg.HiddenSize}
}

// row reports row t's margin and applies a swap forced there; idx and wts
// are route's choice, returned unchanged without a swap.
func (r *routeRows) row(t int, logits, x, router []float32, idx []int, wts []float32) ([]int, []float32) {
	pos := r.pos0 + t
	for _, s := range r.tap.Swaps {
		if s.Pos == pos && s.Layer == r.layer {
			idx, wts = routeSwapped(logits, len(idx), s.Out, s.In, idx, wts)
		}
	}
	if r.tap.Margin != nil {
		m := topKMargin(logits, len(idx))
		m.Pos, m.Layer, m.Width = pos, r.layer, r.hid
		m.Scale = absDot(router[m.Kth*r.hid:(m.Kth+1)*r.hid], x) + absDot(router[m.Next*r.hid:(m.Next+1)*r.hid], x)
		r.tap.Margin(m)
	}
	return idx, wts
}

// topKMargin is the margin at the top-k boundary of one row's router
// logits, in route's order (the float32 softmax, ties to the lower index).
func topKMargin(logits []float32, k int) RouteMargin {
	order := rankExperts(softmax(logits))
	a, b := order[k-1], order[k]
	m := RouteMargin{Kth: a, Next: b, KthLogit: logits[a], NextLogit: logits[b], Logits: logits}
	m.Margin = float64(logits[a]) - float64(logits[b])
	if s := math.Max(math.Abs(float64(logits[a])), math.Abs(float64(logits[b]))); s > 0 {
		m.Rel = math.Abs(m.Margin) / s
	}
	return m
}

// routeSwapped is route's choice with expert out replaced by in at its
// place in route's order (in taking out's rank and out in's), the k first
// then renormalised as route does; a swap that does not apply (out not
// chosen, or in already chosen) leaves idx and wts.
func routeSwapped(logits []float32, k, out, in int, idx []int, wts []float32) ([]int, []float32) {
	probs := softmax(logits)
	order := rankExperts(probs)
	io, ii := -1, -1
	for r, e := range order {
		switch e {
		case out:
			io = r
		case in:
			ii = r
		}
	}
	if io < 0 || ii < 0 || io >= k || ii < k {
		return idx, wts
	}
	order[io], order[ii] = in, out
	return routeWeights(probs, order[:k])
}

// absDot is Σ |a_i·b_i| in float64.
func absDot(a, b []float32) float64 {
	var s float64
	for i, v := range a {
		s += math.Abs(float64(v) * float64(b[i]))
	}
	return s
}

// RouteGammaBound bounds how far a backend summing the two router logits
// of m in float32, in any order, can move their difference from this
// package's: each of this package's logits is the float32 nearest the exact
// dot product (Dot: float64 sums of exact products, rounded once: within
// half an ulp, 2⁻²⁴|l|), and a float32 sum of Width products in any order
// lies within γ = Width·2⁻²⁴ of Σ|w·x| of the exact one (the standard
// bound, Higham's γ_n with n·u < 1, u = 2⁻²⁴). The difference of the two
// logits thus moves by at most 2⁻²⁴·(Width·Scale + |KthLogit| +
// |NextLogit|). It holds for the same inputs x; the inputs' own difference
// (the layers before, in another order too) is measured, not bounded
// (route_explain.go's spread).
func RouteGammaBound(m RouteMargin) float64 {
	const u = 1.0 / (1 << 24)
	return u * (float64(m.Width)*m.Scale + math.Abs(float64(m.KthLogit)) + math.Abs(float64(m.NextLogit)))
}

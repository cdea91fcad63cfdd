package main

import (
	"fmt"
	"math"
	"slices"

	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// A take's routing in a batch against its routing alone (bench-take
// -near-ties with the backbone's routing log, cuda.TakeFrames.TapRoutes):
// the first step and layer at which the two chose different experts, and
// whether the router's own logits show that choice at a near-tie. Pure
// arithmetic on the logged ids and logits, so it builds (and its tests run)
// without the cuda tag.

// routesLog is a take's routing, by frame (the step that made the frame's
// logits) and layer. A take's first frame comes from its prefill, which is
// not logged.
type routesLog map[int][]cuda.StepRoute

// routeParting is where a take's routing in the batch first chose other
// experts than alone (as sets: an order within the k chosen is no parting).
type routeParting struct {
	Frame       int     `json:"frame"` // the step that made this frame's logits
	Layer       int     `json:"layer"`
	AloneOnly   []int32 `json:"alone_only_experts"`
	BatchedOnly []int32 `json:"batched_only_experts"`
	// Margin is, on the take's router logits alone, the highest logit of
	// the experts only it chose less the lowest of those only the batch
	// chose: how far alone's choice was from the batch's. Diff is the two
	// runs' largest router-logit difference at that layer (Rel: drama3.LogitsDiff,
	// the alone logits the reference). A swap of two experts needs Margin ≤ 2·Diff (each
	// logit moved at most Diff). With the router logits within fast's
	// logitsTol of each other (Rel), Tie is that with Diff > 0: the routing
	// parted at a near-tie of the router, shown on its own logits; Against
	// is its opposite: chosen against its own logits, which no rounding
	// explains. With Rel past logitsTol, neither: the router's inputs had
	// parted beyond rounding before (a prefill's routing is not logged).
	Margin  float64 `json:"router_logit_margin"`
	Diff    float64 `json:"router_logits_diff"`
	Rel     float64 `json:"router_logits_diff_share"`
	Tie     bool    `json:"tie"`
	Against bool    `json:"against_its_logits"`
}

// firstRouteParting compares two takes' routing frame by frame in frame
// order (nil: no parting over the frames both logged; frames is how many
// both logged).
func firstRouteParting(alone, batched routesLog) (p *routeParting, frames int) {
	var common []int
	for f := range alone {
		if _, ok := batched[f]; ok {
			common = append(common, f)
		}
	}
	slices.Sort(common)
	for _, f := range common {
		a, b := alone[f], batched[f]
		for layer := range min(len(a), len(b)) {
			if p := routeDiffers(a[layer], b[layer]); p != nil {
				p.Frame, p.Layer = f, layer
				return p, len(common)
			}
		}
	}
	return nil, len(common)
}

// routeDiffers is a layer's parting where alone (a) and batched (b) chose
// different sets of experts, nil where the same.
func routeDiffers(a, b cuda.StepRoute) *routeParting {
	aOnly, bOnly := setMinus(a.Experts, b.Experts), setMinus(b.Experts, a.Experts)
	if len(aOnly) == 0 && len(bOnly) == 0 {
		return nil
	}
	p := &routeParting{AloneOnly: aOnly, BatchedOnly: bOnly}
	logit := func(e int32) (float64, bool) {
		if e < 0 || int(e) >= len(a.Logits) {
			return 0, false
		}
		return float64(a.Logits[e]), true
	}
	hi, lo := math.Inf(-1), math.Inf(1)
	ok := len(aOnly) > 0 && len(bOnly) > 0 && len(a.Logits) == len(b.Logits)
	for _, e := range aOnly {
		l, in := logit(e)
		ok = ok && in
		hi = max(hi, l)
	}
	for _, e := range bOnly {
		l, in := logit(e)
		ok = ok && in
		lo = min(lo, l)
	}
	if !ok {
		p.Margin, p.Against = math.Inf(1), true // ids out of range, or not a swap
		return p
	}
	p.Margin = hi - lo
	p.Diff, p.Rel = drama3.LogitsSpread(b.Logits, a.Logits)
	if p.Rel <= logitsTol {
		p.Tie = p.Diff > 0 && p.Margin <= 2*p.Diff
		p.Against = !p.Tie
	}
	return p
}

// setMinus is the elements of a not in b, in a's order.
func setMinus(a, b []int32) []int32 {
	var out []int32
	for _, e := range a {
		if !slices.Contains(b, e) {
			out = append(out, e)
		}
	}
	return out
}

// String is the parting's phrase in a finding's line.
func (p *routeParting) String() string {
	tie := "the router's logits apart beyond rounding"
	switch {
	case p.Tie:
		tie = "at a tie of the router"
	case p.Against:
		tie = "against its own logits"
	}
	return fmt.Sprintf("routing parts at frame %d layer %d (alone %v, batched %v): margin %.3g against the router logits' difference %.3g (%.2g relative), %s",
		p.Frame, p.Layer, p.AloneOnly, p.BatchedOnly, p.Margin, p.Diff, p.Rel, tie)
}

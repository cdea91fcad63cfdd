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
// the first prompt row or step, and layer, at which the two chose different
// experts, and whether the router's own logits show that choice at a
// near-tie. Pure arithmetic on the logged ids and logits, so it builds (and
// its tests run) without the cuda tag.

// routesLog is a take's routing, each row's by layer: its prompt rows' (by
// row in the prompt: the prefill, alone or in a joint pass, that made frame
// 0) and its steps' (by the frame each made).
type routesLog struct {
	prompt map[int][]cuda.StepRoute
	steps  map[int][]cuda.StepRoute
}

// add keeps a row's routing (cuda.TakeRoutesTap's arguments).
func (l *routesLog) add(prompt bool, at int, layers []cuda.StepRoute) {
	m := &l.steps
	if prompt {
		m = &l.prompt
	}
	if *m == nil {
		*m = map[int][]cuda.StepRoute{}
	}
	(*m)[at] = layers
}

// routeParting is where a take's routing in the batch first chose other
// experts than alone (as sets: an order within the k chosen is no parting).
type routeParting struct {
	// Frame is the first frame whose logits the parting moved: the frame
	// its step made, or 0 for a prompt row (PromptRow; −1: a step's).
	Frame       int     `json:"frame"`
	PromptRow   int     `json:"prompt_row"`
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
	// parted beyond rounding before (at an earlier row's parting, or one
	// the log did not see).
	Margin  float64 `json:"router_logit_margin"`
	Diff    float64 `json:"router_logits_diff"`
	Rel     float64 `json:"router_logits_diff_share"`
	Tie     bool    `json:"tie"`
	Against bool    `json:"against_its_logits"`
}

// firstRouteParting compares two takes' routing row by row: the prompt
// rows in order, then the steps in frame order (nil: no parting over the
// rows both logged; rows and frames are how many of each both logged).
func firstRouteParting(alone, batched routesLog) (p *routeParting, rows, frames int) {
	prompt, steps := common(alone.prompt, batched.prompt), common(alone.steps, batched.steps)
	for _, r := range prompt {
		if p := firstLayerParting(alone.prompt[r], batched.prompt[r]); p != nil {
			p.Frame, p.PromptRow = 0, r
			return p, len(prompt), len(steps)
		}
	}
	for _, f := range steps {
		if p := firstLayerParting(alone.steps[f], batched.steps[f]); p != nil {
			p.Frame, p.PromptRow = f, -1
			return p, len(prompt), len(steps)
		}
	}
	return nil, len(prompt), len(steps)
}

// common is the keys a and b share, in order.
func common(a, b map[int][]cuda.StepRoute) []int {
	var out []int
	for k := range a {
		if _, ok := b[k]; ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// firstLayerParting is a row's first layer at which a and b chose
// different experts (nil: none).
func firstLayerParting(a, b []cuda.StepRoute) *routeParting {
	for layer := range min(len(a), len(b)) {
		if p := routeDiffers(a[layer], b[layer]); p != nil {
			p.Layer = layer
			return p
		}
	}
	return nil
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
	at := fmt.Sprintf("frame %d", p.Frame)
	if p.PromptRow >= 0 {
		at = fmt.Sprintf("prompt row %d", p.PromptRow)
	}
	return fmt.Sprintf("routing parts at %s layer %d (alone %v, batched %v): margin %.3g against the router logits' difference %.3g (%.2g relative), %s",
		at, p.Layer, p.AloneOnly, p.BatchedOnly, p.Margin, p.Diff, p.Rel, tie)
}

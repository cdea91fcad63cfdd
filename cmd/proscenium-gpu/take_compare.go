package main

import (
	"fmt"
	"math"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// Two takes' codes compared, and where they part, the draw that parted
// judged against the logits of both runs: debug-take's GPU against the CPU,
// bench-take -near-ties' take in a batch against itself alone. Pure
// arithmetic on codes and logits, so it builds (and its tests run) without
// the cuda tag.

// benchSampling is every benchmark take's sampling settings.
var benchSampling = sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}

// logitsTol is fast's relative tolerance of a logits vector
// (drama3.LogitsDiff; issue 27): -near-ties' and debug-take's -tol default.
const logitsTol = 1e-4

// A take's class under -near-ties, beside cpu.DrawNearTie (a parting at a
// near-tie of a draw, every vector up to it within logitsTol),
// cpu.RoutingNearTie (the routing parted at a tie of the router, shown on
// the logged router logits, no later than the logits left the tolerance)
// and cpu.Unexplained (a parting at no near-tie, or routing chosen against
// its own logits): its codes the same alone and batched; a parting at a
// near-tie of vectors that had left the tolerance before it, with no
// routing tie shown (something upstream of the draws moved the logits:
// without the routing log a routing choice at a near-tie of the router and
// a fault cannot be told apart).
const (
	takeIdentical    = "identical"
	takeOffTolerance = "off the tolerance"
)

// divergence is where two takes' codes first part (firstDivergence), and
// debug-take's finding there: the CPU's take against the GPU's.
type divergence struct {
	Seed      uint64  `json:"seed"`
	Frame     int     `json:"frame"`
	Codebook  int     `json:"codebook"` // −1: one side ended and the other did not
	CPUCode   int     `json:"cpu_code"`
	GPUCode   int     `json:"gpu_code"`
	LogitGap  float64 `json:"cpu_logit_gap"`   // CPU logits: |l[cpu code] − l[gpu code]|
	LogitsErr float64 `json:"logits_max_diff"` // max |gpu − cpu| over that vector
	// NearTie: the draw lay within MarginBound of a boundary (DrawMargin,
	// the CPU's arithmetic) or the two codes' logits within the logits'
	// difference (drama3.NearTie): a legitimate divergence.
	NearTie     bool    `json:"near_tie"`
	DrawMargin  float64 `json:"draw_margin"`
	MarginBound float64 `json:"margin_bound"`
	// Class is the divergence's explanation (cpu.Explainer): "draw
	// near-tie", "routing near-tie" or "unexplained"; LogitsRel the
	// vector's relative difference (drama3.LogitsDiff), FirstOff the first
	// frame whose semantic logits left the tolerance (−1: none), Routing
	// the smallest top-k router margin, against its bound, in the backbone
	// run that made that frame (or the diverging one), with its layer,
	// experts and (-confirm-routing) the swapped replay's verdict.
	Class     string          `json:"class"`
	LogitsRel float64         `json:"logits_relative_diff"`
	FirstOff  int             `json:"first_frame_off_tolerance"`
	Routing   *cpu.RoutingTie `json:"routing,omitempty"`
}

// nearTieTake is one take's finding.
type nearTieTake struct {
	Batch     int    `json:"batch"`
	Take      int    `json:"take"`
	Seed      uint64 `json:"seed"`
	Frames    int    `json:"frames"` // the frames both made
	Identical bool   `json:"identical"`
	// Where the two first part (Codebook −1: one drew end of speech where
	// the other did not), the two codes, and the draw's margin against the
	// bound the logits' difference allows (shares of the probability mass).
	Frame       int     `json:"frame"`
	Codebook    int     `json:"codebook"`
	AloneCode   int     `json:"alone_code"`
	BatchedCode int     `json:"batched_code"`
	NearTie     bool    `json:"near_tie"`
	DrawMargin  float64 `json:"draw_margin_share"`
	MarginBound float64 `json:"margin_bound_share"`
	LogitGap    float64 `json:"logit_gap"` // the alone take's logits: |l[alone code] − l[batched code]|
	// LogitsRel is the deciding vector's relative difference
	// (drama3.LogitsDiff: max |a − b| over max |b|); WorstBefore the worst
	// over every vector before it (or over the whole take when identical).
	LogitsRel   float64 `json:"logits_diff_share"`
	WorstBefore float64 `json:"worst_diff_before_share"`
	// FirstOff is the first frame with a vector, up to the deciding one
	// (every one where identical), beyond logitsTol (−1: none); Class
	// the finding's (takeIdentical, cpu.DrawNearTie …).
	FirstOff int    `json:"off_tolerance_from_frame"`
	Class    string `json:"class"`
	// Routes is where the take's routing in the batch first chose other
	// experts than alone (nil: none over RoutesPrompt prompt rows and
	// RoutesFrames frames' steps, or no routing logged: both 0).
	Routes       *routeParting `json:"routes_part,omitempty"`
	RoutesPrompt int           `json:"routes_prompt_rows"`
	RoutesFrames int           `json:"routes_frames"`
}

// takeRun is one run of a take: its frames, whether it ended (end of
// speech), every logits vector tapped and (where logged) its routing.
type takeRun struct {
	codes  [][]int
	ended  bool
	logits drama3.LogitsLog
	routes routesLog
}

// compareTakes is one take's finding from its run alone (a) and in the
// batch (t).
func compareTakes(b, i int, seed uint64, a, t takeRun) nearTieTake {
	r := nearTieTake{Batch: b, Take: i, Seed: seed, Frames: min(len(a.codes), len(t.codes)), Frame: -1, Codebook: -1, FirstOff: -1, Class: cpu.Unexplained}
	r.Routes, r.RoutesPrompt, r.RoutesFrames = firstRouteParting(a.routes, t.routes)
	d := firstDivergence(a.codes, t.codes, a.ended, t.ended)
	last := [2]int{len(a.codes), 0} // every vector before this one is compared
	if d != nil {
		r.Frame, r.Codebook, r.AloneCode, r.BatchedCode = d.Frame, d.Codebook, d.CPUCode, d.GPUCode
		last = [2]int{d.Frame, max(d.Codebook, 0)}
	} else {
		r.Identical, r.Class = true, takeIdentical
	}
	for k, av := range a.logits {
		tv := t.logits[k]
		if tv == nil || len(tv) != len(av) || k[0] > last[0] || k[0] == last[0] && k[1] > last[1] {
			continue
		}
		diff := drama3.LogitsDiff(tv, av)
		if k != last {
			r.WorstBefore = max(r.WorstBefore, diff)
		}
		if !(diff <= logitsTol) && (r.FirstOff < 0 || k[0] < r.FirstOff) {
			r.FirstOff = k[0]
		}
	}
	if r.routingFault() {
		r.Class = cpu.Unexplained
	}
	if d == nil {
		return r
	}
	p, ok := judgeParting(a.codes, t.codes, d, a.logits, t.logits, benchSampling, seed)
	if !ok {
		return r // no logits of that draw: not shown a near-tie
	}
	r.AloneCode, r.BatchedCode, r.LogitGap = p.aCode, p.bCode, p.gap
	r.LogitsRel = drama3.LogitsDiff(p.bv, p.av)
	r.NearTie, r.DrawMargin, r.MarginBound = p.nearTie, p.margin, p.bound
	switch {
	case r.routingFault():
	case r.NearTie && r.FirstOff < 0:
		r.Class = cpu.DrawNearTie
	case r.routedFirst():
		r.Class = cpu.RoutingNearTie
	case r.NearTie:
		r.Class = takeOffTolerance
	}
	return r
}

// upstream is the frame before which the take's two runs saw the same
// inputs to within rounding: the first whose logits left the tolerance,
// or the parting's (the whole take where neither).
func (r nearTieTake) upstream() int {
	f := r.Frames
	if r.Frame >= 0 {
		f = r.Frame
	}
	if r.FirstOff >= 0 {
		f = min(f, r.FirstOff)
	}
	return f
}

// routedFirst: the routing parted at a tie of the router no later than
// the logits left the tolerance (or the codes parted), which explains what
// followed.
func (r nearTieTake) routedFirst() bool {
	return r.Routes != nil && r.Routes.Tie && r.Routes.Frame <= r.upstream()
}

// routingFault: the routing parted against its own logits (within
// rounding of each other) no later than the logits left the tolerance,
// which no rounding explains.
func (r nearTieTake) routingFault() bool {
	return r.Routes != nil && r.Routes.Against && r.Routes.Frame <= r.upstream()
}

// partedDraw is the draw at which two takes a and b first part (where one
// ended, the semantic draw of that frame, whose last logit is end of
// speech), judged on the logits both runs tapped: the two codes drawn,
// both runs' logits vectors, the codes' gap on a's logits, and
// drama3.NearTie's verdict with a as the reference.
type partedDraw struct {
	aCode, bCode  int
	av, bv        []float32
	gap           float64
	nearTie       bool
	margin, bound float64
}

// judgeParting judges the draw at d (firstDivergence of a and b) under
// settings s and seed; ok is false where either run has no logits of it.
// debug-take (the CPU's take a against the GPU's b) and -near-ties (a take
// alone against itself in a batch) both judge their partings here.
func judgeParting(a, b [][]int, d *divergence, al, bl drama3.LogitsLog, s sampling.Settings, seed uint64) (p partedDraw, ok bool) {
	k, ac, bc := d.Codebook, d.CPUCode, d.GPUCode
	if k < 0 {
		k, ac, bc = 0, frameCode(a, d.Frame), frameCode(b, d.Frame)
	}
	av, bv := al[[2]int{d.Frame, k}], bl[[2]int{d.Frame, k}]
	if av == nil || len(bv) != len(av) {
		return p, false
	}
	if ac < 0 {
		ac = len(av) - 1
	}
	if bc < 0 {
		bc = len(av) - 1
	}
	p = partedDraw{aCode: ac, bCode: bc, av: av, bv: bv, gap: math.Abs(float64(av[ac]) - float64(av[bc]))}
	p.nearTie, p.margin, p.bound = drama3.NearTie(av, bv, s, drama3.Uniform(seed, d.Frame, k), ac, bc)
	return p, true
}

// String is the finding's line.
func (r nearTieTake) String() string {
	s := fmt.Sprintf("near-ties B=%d take %d (seed %d): ", r.Batch, r.Take, r.Seed)
	off := ""
	if r.FirstOff >= 0 {
		off = fmt.Sprintf("; off the tolerance (%.0e) from frame %d", logitsTol, r.FirstOff)
	}
	switch {
	case r.Routes != nil:
		off += "; " + r.Routes.String()
	case r.logged():
		off += fmt.Sprintf("; the same routing over %d prompt rows and %d frames' steps", r.RoutesPrompt, r.RoutesFrames)
	}
	if r.Identical {
		return s + fmt.Sprintf("the same codes alone and batched over %d frames; logits apart by at most %.3g (relative)%s", r.Frames, r.WorstBefore, off)
	}
	return s + fmt.Sprintf("parts at frame %d codebook %d (alone %d, batched %d): %s: near-tie %v, draw margin %.3g against the bound %.3g, logit gap %.3g; that vector %.3g apart (relative), every one before at most %.3g%s",
		r.Frame, r.Codebook, r.AloneCode, r.BatchedCode, r.Class, r.NearTie, r.DrawMargin, r.MarginBound, r.LogitGap, r.LogitsRel, r.WorstBefore, off)
}

// logged: the take's routing was logged in both runs.
func (r nearTieTake) logged() bool { return r.RoutesPrompt > 0 || r.RoutesFrames > 0 }

// nearTiesTally counts the findings by class: -near-ties' summary line.
func nearTiesTally(found []nearTieTake) string {
	n := map[string]int{}
	routed, logged := 0, 0
	for _, r := range found {
		n[r.Class]++
		if r.logged() {
			logged++
		}
		if r.Routes != nil && r.Routes.Tie {
			routed++
		}
	}
	upstream := "upstream: a routing near-tie or a fault, not told apart here"
	if logged > 0 {
		upstream = "upstream, not shown a routing tie"
	}
	return fmt.Sprintf("near-ties: %d takes: %d identical, %d parted at a draw near-tie, %d parted after a routing near-tie, %d parted with logits off the tolerance before (%s), %d unexplained; routing logged for %d, parted at a tie of the router in %d",
		len(found), n[takeIdentical], n[cpu.DrawNearTie], n[cpu.RoutingNearTie], n[takeOffTolerance], upstream, n[cpu.Unexplained], logged, routed)
}

// nearTiesVerdict fails on a take that parted from itself alone where no
// near-tie explains it, on one whose routing parted against its own router
// logits, and under exact on any take whose codes or logits differ from its
// own alone at all.
func nearTiesVerdict(found []nearTieTake, exact bool) error {
	for _, r := range found {
		switch {
		case exact && (!r.Identical || r.WorstBefore != 0 || r.Routes != nil):
			return fmt.Errorf("near-ties: under exact, take %d of %d is not its bits alone (parts: %v, logits apart by %.3g, routing parts: %v)", r.Take, r.Batch, !r.Identical, r.WorstBefore, r.Routes != nil)
		case r.routingFault():
			return fmt.Errorf("near-ties: take %d of %d: %v, before its logits left the tolerance", r.Take, r.Batch, r.Routes)
		case r.Identical:
		case r.Class == cpu.Unexplained:
			return fmt.Errorf("near-ties: take %d of %d parts from itself alone at frame %d codebook %d, not at a near-tie", r.Take, r.Batch, r.Frame, r.Codebook)
		}
	}
	return nil
}

// frameCode is codebook 0's code of frame f, or −1 where the take ended
// before it (end of speech was drawn there).
func frameCode(frames [][]int, f int) int {
	if f < len(frames) {
		return frames[f][0]
	}
	return -1
}

// firstDivergence is the first code in which two takes differ (nil: none).
func firstDivergence(a, b [][]int, aEnd, bEnd bool) *divergence {
	for f := 0; f < min(len(a), len(b)); f++ {
		for c := range a[f] {
			if a[f][c] != b[f][c] {
				return &divergence{Frame: f, Codebook: c, CPUCode: a[f][c], GPUCode: b[f][c]}
			}
		}
	}
	if len(a) != len(b) || aEnd != bEnd {
		return &divergence{Frame: min(len(a), len(b)), Codebook: -1, CPUCode: len(a), GPUCode: len(b)}
	}
	return nil
}

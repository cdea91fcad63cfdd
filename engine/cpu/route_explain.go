package cpu

import (
	"context"
	"fmt"
	"math"
	"slices"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// This file explains a free-running take of another backend (the GPU's)
// that diverged from this package's: a draw near-tie (the draw lay within
// the logits' difference of a boundary, drama3.NearTie), a routing near-tie
// (the backbone run that made the diverging frame, or the first frame whose
// logits left the tolerance, had a row whose top-k boundary lay within the
// router logits' rounding error, so the other backend chose the other
// expert: route_tap.go), or neither — unexplained, a fault to look for.
// `proscenium-gpu debug-take` classifies its divergences with it.

// The classes of a divergence.
const (
	DrawNearTie    = "draw near-tie"
	RoutingNearTie = "routing near-tie"
	Unexplained    = "unexplained"
)

// SpreadFactor is how many times the measured rounding spread of a margin
// (twice the router logits' spread of this package against itself rounded
// differently) a routing margin may be and still count as a tie: issue 27's
// "closer than 10× the measured logit error".
const SpreadFactor = 10

// TakeLog is one backend's free-running take: its frames, whether it ended
// (end of speech), and every logits vector its tap showed.
type TakeLog struct {
	Frames [][]int
	End    bool
	Logits drama3.LogitsLog
}

// RoutingTie is the row and layer whose top-k margin lay nearest its bound
// in the backbone run that made a frame.
type RoutingTie struct {
	RouteMargin
	// Frame is the frame whose semantic logits that run made: 0 the
	// prompt's prefill (every prompt row searched), f > 0 the step after
	// frame f−1.
	Frame int `json:"frame"`
	// GammaBound is RouteGammaBound: the float32 reordering of the two
	// router dot products on the same inputs. Spread is the largest
	// |l'_e − l_e| over the row's router logits of this package run on
	// weights Rounded (seed 1) against its own, teacher-forced on the same
	// codes: how far another float32 rounding of every layer before moves
	// them (0 when not measured). Bound = GammaBound + SpreadFactor·2·Spread.
	GammaBound float64 `json:"gamma_bound"`
	Spread     float64 `json:"measured_spread"`
	Bound      float64 `json:"bound"`
	Tie        bool    `json:"tie"` // |Margin| ≤ Bound
	// Confirmed (with Explainer.Confirm, for a tie): a replay of this
	// package with the two experts swapped there (RouteSwap) made the other
	// backend's codes through the divergence. ReplayLogitsDiff is that
	// replay's logits vector at the divergence against the other's
	// (drama3.LogitsDiff): rounding-sized where the swap is the whole story.
	Confirmed        *bool   `json:"confirmed,omitempty"`
	ReplayLogitsDiff float64 `json:"replay_logits_diff,omitempty"`
}

// Explanation is a divergence's class and the figures behind it.
type Explanation struct {
	Class string `json:"class"`
	// LogitsRel is drama3.LogitsDiff of the other's logits vector at the
	// divergence against this package's; the draw test (drama3.NearTie)
	// gave DrawNearTie, DrawMargin and DrawBound. A draw near-tie needs the
	// vector within the tolerance too: a larger difference is the sign of
	// something before the draw (a routing tie, or a fault).
	LogitsRel   float64 `json:"logits_relative_diff"`
	DrawNearTie bool    `json:"draw_near_tie"`
	DrawMargin  float64 `json:"draw_margin"`
	DrawBound   float64 `json:"draw_bound"`
	// FirstOff is the first frame, up to the divergence, whose semantic
	// logits differ beyond the tolerance (−1: none): the frame whose
	// backbone run the routing search looks at (else the divergence's).
	FirstOff int         `json:"first_frame_off_tolerance"`
	Routing  *RoutingTie `json:"routing,omitempty"`
}

// Explainer classifies divergences of takes of one prompt and settings.
type Explainer struct {
	Ref      *Backend // this package's backend (replays run on it: Begin resets it)
	Prompt   []int
	Settings sampling.Settings
	Tol      float64 // the relative tolerance of a logits vector (drama3.LogitsDiff)
	// Rounded, when not nil, gives this package on differently rounded
	// weights (LoadBackendRounded), loaded once on first need: the measured
	// spread of the router logits. Without it only RouteGammaBound counts.
	Rounded func() (*Backend, error)
	// Confirm replays each routing tie with its experts swapped and counts
	// it only where the replay makes the other backend's codes.
	Confirm bool

	rounded *Backend
}

// Explain classifies the first divergence of other's take (seed seed) from
// ref's: at frame, codebook (−1: one take ended there and the other did
// not; the draw is codebook 0's, end of speech its last logit).
func (e *Explainer) Explain(seed uint64, ref, other TakeLog, frame, codebook int) (Explanation, error) {
	x := Explanation{Class: Unexplained, FirstOff: -1}
	k := max(codebook, 0)
	key := [2]int{frame, k}
	hv, gv := ref.Logits[key], other.Logits[key]
	drawn := hv != nil && len(gv) == len(hv)
	if drawn {
		refCode, otherCode := takeCode(ref, frame, k, len(hv)), takeCode(other, frame, k, len(hv))
		x.LogitsRel = drama3.LogitsDiff(gv, hv)
		x.DrawNearTie, x.DrawMargin, x.DrawBound = drama3.NearTie(hv, gv, e.Settings, drama3.Uniform(seed, frame, k), refCode, otherCode)
	}
	for j := 0; j <= frame; j++ {
		h, g := ref.Logits[[2]int{j, 0}], other.Logits[[2]int{j, 0}]
		if h == nil || len(g) != len(h) {
			break
		}
		if !(drama3.LogitsDiff(g, h) <= e.Tol) {
			x.FirstOff = j
			break
		}
	}
	w := frame
	if x.FirstOff >= 0 {
		w = x.FirstOff
	}
	tie, err := e.routingTie(ref.Frames, w)
	if err != nil {
		return x, err
	}
	x.Routing = tie
	if tie != nil && tie.Tie && e.Confirm {
		ok, diff, err := e.confirm(seed, tie, other, frame, codebook, gv)
		if err != nil {
			return x, err
		}
		tie.Confirmed, tie.ReplayLogitsDiff = &ok, diff
	}
	switch {
	case drawn && x.LogitsRel <= e.Tol && x.DrawNearTie:
		x.Class = DrawNearTie
	case tie != nil && tie.Tie && (tie.Confirmed == nil || *tie.Confirmed):
		x.Class = RoutingNearTie
	}
	return x, nil
}

// takeCode is the take's code at frame f, codebook k, or end (the last
// logit, of n) where the take ended before frame f.
func takeCode(t TakeLog, f, k, n int) int {
	if f < len(t.Frames) {
		return t.Frames[f][k]
	}
	return n - 1
}

// routeKey is a row's position and a layer.
type routeKey struct{ pos, layer int }

// window is the positions of the backbone run that made frame w's
// semantic logits: the prompt's rows for frame 0, else the step's one row.
func (e *Explainer) window(w int) (lo, hi int) {
	p := len(e.Prompt)
	if w == 0 {
		return 0, p
	}
	return p + w - 1, p + w
}

// replayRuns runs b over the prompt and the steps of frames[:w] (teacher
// forced: the backbone only, no tower or draws) with tap set.
func (e *Explainer) replayRuns(b *Backend, frames [][]int, w int, tap *RouteTap) error {
	b.SetRouteTap(tap)
	defer b.SetRouteTap(nil)
	sem := make([]float32, b.heads.Codes()+1)
	if err := b.Begin(context.Background(), e.Prompt, sem); err != nil {
		return err
	}
	for j := 0; j < w; j++ {
		if err := b.Advance(frames[j], sem); err != nil {
			return fmt.Errorf("replay, frame %d: %w", j+1, err)
		}
	}
	return nil
}

// routingTie is the row and layer of the run that made frame w whose
// margin lies nearest its bound (nil: the run has no routed rows).
func (e *Explainer) routingTie(frames [][]int, w int) (*RoutingTie, error) {
	if w > len(frames) {
		return nil, fmt.Errorf("routing: frame %d of a take of %d frames", w, len(frames))
	}
	lo, hi := e.window(w)
	var margins []RouteMargin
	tap := &RouteTap{Margin: func(m RouteMargin) {
		if m.Pos >= lo && m.Pos < hi {
			m.Logits = slices.Clone(m.Logits)
			margins = append(margins, m)
		}
	}}
	if err := e.replayRuns(e.Ref, frames, w, tap); err != nil {
		return nil, err
	}
	spread := map[routeKey]float64{}
	if e.Rounded != nil {
		if e.rounded == nil {
			r, err := e.Rounded()
			if err != nil {
				return nil, err
			}
			e.rounded = r
		}
		ref := map[routeKey][]float32{}
		for _, m := range margins {
			ref[routeKey{m.Pos, m.Layer}] = m.Logits
		}
		tap := &RouteTap{Margin: func(m RouteMargin) {
			l := ref[routeKey{m.Pos, m.Layer}]
			if l == nil {
				return
			}
			var s float64
			for i, v := range m.Logits {
				s = max(s, math.Abs(float64(v)-float64(l[i])))
			}
			spread[routeKey{m.Pos, m.Layer}] = s
		}}
		if err := e.replayRuns(e.rounded, frames, w, tap); err != nil {
			return nil, fmt.Errorf("rounded: %w", err)
		}
	}
	var best *RoutingTie
	bestRatio := math.Inf(1)
	for _, m := range margins {
		t := RoutingTie{RouteMargin: m, Frame: w, GammaBound: RouteGammaBound(m), Spread: spread[routeKey{m.Pos, m.Layer}]}
		t.Bound = t.GammaBound + SpreadFactor*2*t.Spread
		ratio := math.Abs(m.Margin) / t.Bound
		if best == nil || ratio < bestRatio {
			t.Tie = math.Abs(m.Margin) <= t.Bound
			best, bestRatio = &t, ratio
		}
	}
	return best, nil
}

// confirm replays the take with tie's experts swapped and reports whether
// it makes other's codes up to the diverging one (frame f, codebook), and the replay's logits vector at
// (f, k) against other's (gv).
func (e *Explainer) confirm(seed uint64, tie *RoutingTie, other TakeLog, f, codebook int, gv []float32) (bool, float64, error) {
	k := max(codebook, 0)
	e.Ref.SetRouteTap(&RouteTap{Swaps: []RouteSwap{{Pos: tie.Pos, Layer: tie.Layer, Out: tie.Kth, In: tie.Next}}})
	defer e.Ref.SetRouteTap(nil)
	sf, err := drama3.NewStepFrames(e.Ref, nil)
	if err != nil {
		return false, 0, err
	}
	log := drama3.LogitsLog{}
	sf.TapLogits(log.Tap)
	if err := sf.Begin(context.Background(), e.Prompt, e.Settings, seed); err != nil {
		return false, 0, err
	}
	frames, end, err := drama3.MakeFrames(sf, f+1, nil)
	if err != nil {
		return false, 0, err
	}
	var diff float64
	if rv := log[[2]int{f, k}]; rv != nil && len(gv) == len(rv) {
		diff = drama3.LogitsDiff(rv, gv)
	}
	return agreesThrough(frames, end, other.Frames, other.End, f, codebook), diff, nil
}

// agreesThrough reports whether take a made take b's codes up to its
// diverging code: every code of frames 0…f−1, and of frame f codebooks
// 0…k (k −1: whether each ended there). A take that made no more frames
// without ending (its length limit) agrees from there.
func agreesThrough(a [][]int, aEnd bool, b [][]int, bEnd bool, f, k int) bool {
	for j := 0; j <= f; j++ {
		aHas, bHas := j < len(a), j < len(b)
		if (!aHas && !aEnd) || (!bHas && !bEnd) {
			return true
		}
		if aHas != bHas {
			return false
		}
		if !aHas {
			return true
		}
		n := len(a[j])
		if j == f {
			n = max(k, 0) + 1
		}
		if !slices.Equal(a[j][:n], b[j][:n]) {
			return false
		}
	}
	return true
}

//go:build cuda

package main

import (
	"fmt"

	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// bench-take -near-ties: each take of a round of B made together (the
// B-row step and tower) against the same seed's take made alone, both on
// the GPU under the same policy. Under fast the B-row kernels may sum in
// another order than the one-row ones (fast's contract), so a take's codes
// alone and in a batch may part; where they do, the draw that parted must
// sit at a near-tie of the two runs' logits (drama3.NearTie, the alone
// take's logits as the reference), as debug-take asks of the GPU against
// the CPU. Under exact they must not part at all.

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
}

// nearTies runs -near-ties for a round of b takes (seeds base…base+b−1) on
// set, whose frames f has the pipeline switched off meanwhile (the logits
// are read as each frame is made).
func nearTies(set *cuda.TakeFrames, f *cuda.Frames, pipeline bool, b, base int, prompt []int, frames int, chunks drama3.ChunkPolicy, each bool) ([]nearTieTake, error) {
	f.SetPipeline(false)
	defer f.SetPipeline(pipeline)
	var logs map[drama3.TakeID]drama3.LogitsLog
	if err := set.TapLogits(func(id drama3.TakeID, frame, codebook int, l []float32) {
		if logs[id] == nil {
			logs[id] = drama3.LogitsLog{}
		}
		logs[id].Tap(frame, codebook, l)
	}); err != nil {
		return nil, err
	}
	defer set.TapLogits(nil)
	logs = map[drama3.TakeID]drama3.LogitsLog{}
	together, err := benchRound(set, b, base, prompt, frames, chunks, each)
	if err != nil {
		return nil, err
	}
	batched := logs
	var out []nearTieTake
	for i := range b {
		logs = map[drama3.TakeID]drama3.LogitsLog{}
		alone, err := benchRound(set, 1, base+i, prompt, frames, chunks, each)
		if err != nil {
			return nil, err
		}
		id := drama3.TakeID(i)
		out = append(out, compareTakes(b, i, uint64(base+i), alone.codes[0], together.codes[id], alone.ended[0], together.ended[id], logs[0], batched[id]))
	}
	return out, nil
}

// compareTakes is one take's finding from its codes and logits alone (a)
// and in the batch (t).
func compareTakes(b, i int, seed uint64, a, t [][]int, aEnd, tEnd bool, al, tl drama3.LogitsLog) nearTieTake {
	r := nearTieTake{Batch: b, Take: i, Seed: seed, Frames: min(len(a), len(t)), Frame: -1, Codebook: -1}
	d := firstDivergence(a, t, aEnd, tEnd)
	last := [2]int{len(a), 0} // every vector before this one is compared
	if d != nil {
		r.Frame, r.Codebook, r.AloneCode, r.BatchedCode = d.Frame, d.Codebook, d.CPUCode, d.GPUCode
		last = [2]int{d.Frame, max(d.Codebook, 0)}
	} else {
		r.Identical = true
	}
	for k, av := range al {
		if tv := tl[k]; tv != nil && len(tv) == len(av) && (k[0] < last[0] || k[0] == last[0] && k[1] < last[1]) {
			r.WorstBefore = max(r.WorstBefore, drama3.LogitsDiff(tv, av))
		}
	}
	if d == nil {
		return r
	}
	// The draw that parted: codebook k of the frame, or (one ended) the
	// semantic draw of the frame where one drew end of speech, the last
	// semantic logit.
	k, ac, tc := d.Codebook, d.CPUCode, d.GPUCode
	if k < 0 {
		k, ac, tc = 0, frameCode(a, d.Frame), frameCode(t, d.Frame)
	}
	av, tv := al[[2]int{d.Frame, k}], tl[[2]int{d.Frame, k}]
	if av == nil || len(tv) != len(av) {
		return r // no logits of that draw: not shown a near-tie
	}
	if ac < 0 {
		ac = len(av) - 1
	}
	if tc < 0 {
		tc = len(av) - 1
	}
	r.AloneCode, r.BatchedCode = ac, tc
	r.LogitsRel = drama3.LogitsDiff(tv, av)
	r.LogitGap = float64(av[ac]) - float64(av[tc])
	if r.LogitGap < 0 {
		r.LogitGap = -r.LogitGap
	}
	r.NearTie, r.DrawMargin, r.MarginBound = drama3.NearTie(av, tv, benchSampling, drama3.Uniform(seed, d.Frame, k), ac, tc)
	return r
}

// String is the finding's line.
func (r nearTieTake) String() string {
	s := fmt.Sprintf("near-ties B=%d take %d (seed %d): ", r.Batch, r.Take, r.Seed)
	if r.Identical {
		return s + fmt.Sprintf("the same codes alone and batched over %d frames; logits apart by at most %.3g (relative)", r.Frames, r.WorstBefore)
	}
	return s + fmt.Sprintf("parts at frame %d codebook %d (alone %d, batched %d): near-tie %v, draw margin %.3g against the bound %.3g, logit gap %.3g; that vector %.3g apart (relative), every one before at most %.3g",
		r.Frame, r.Codebook, r.AloneCode, r.BatchedCode, r.NearTie, r.DrawMargin, r.MarginBound, r.LogitGap, r.LogitsRel, r.WorstBefore)
}

// nearTiesVerdict fails on a take that parted from itself alone where no
// near-tie explains it, and under exact on any take that parted at all.
func nearTiesVerdict(found []nearTieTake, exact bool) error {
	for _, r := range found {
		switch {
		case r.Identical:
		case exact:
			return fmt.Errorf("near-ties: under exact, take %d of %d parts from itself alone at frame %d", r.Take, r.Batch, r.Frame)
		case !r.NearTie:
			return fmt.Errorf("near-ties: take %d of %d parts from itself alone at frame %d codebook %d, not at a near-tie", r.Take, r.Batch, r.Frame, r.Codebook)
		}
	}
	return nil
}

//go:build cuda

package main

import (
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
// the CPU. Each finding also says whether the logits had left fast's
// tolerance before the parting (nearTieTake.Class): a draw near-tie proper,
// or one after something upstream of the draws moved the logits. Under
// exact a take's codes and logits must be its own alone, to the bit.

// nearTies runs -near-ties for a round of b takes (seeds base…base+b−1) on
// set, whose frames f has the pipeline switched off meanwhile (the logits
// are read as each frame is made). With routes (the backbone keeps its
// routing log) each step's routing is read too.
func nearTies(set *cuda.TakeFrames, f *cuda.Frames, pipeline, routes bool, b, base int, prompt []int, frames int, chunks drama3.ChunkPolicy, each bool) ([]nearTieTake, error) {
	f.SetPipeline(false)
	defer f.SetPipeline(pipeline)
	var runs map[drama3.TakeID]*takeRun
	run := func(id drama3.TakeID) *takeRun {
		if runs[id] == nil {
			runs[id] = &takeRun{logits: drama3.LogitsLog{}}
		}
		return runs[id]
	}
	if err := set.TapLogits(func(id drama3.TakeID, frame, codebook int, l []float32) {
		run(id).logits.Tap(frame, codebook, l)
	}); err != nil {
		return nil, err
	}
	defer set.TapLogits(nil)
	if routes {
		if err := set.TapRoutes(func(id drama3.TakeID, prompt bool, at int, layers []cuda.StepRoute) {
			run(id).routes.add(prompt, at, layers) // the log's own copies
		}); err != nil {
			return nil, err
		}
		defer set.TapRoutes(nil)
	}
	runs = map[drama3.TakeID]*takeRun{}
	together, err := benchRound(set, b, base, drama3.TextPrompt(prompt), frames, chunks, each)
	if err != nil {
		return nil, err
	}
	batched := runs
	var out []nearTieTake
	for i := range b {
		runs = map[drama3.TakeID]*takeRun{}
		alone, err := benchRound(set, 1, base+i, drama3.TextPrompt(prompt), frames, chunks, each)
		if err != nil {
			return nil, err
		}
		id := drama3.TakeID(i)
		a, t := tapped(runs, 0), tapped(batched, id)
		a.codes, a.ended = alone.codes[0], alone.ended[0]
		t.codes, t.ended = together.codes[id], together.ended[id]
		out = append(out, compareTakes(b, i, uint64(base+i), a, t))
	}
	return out, nil
}

// tapped is what the taps kept of take id (nothing where they saw none of it).
func tapped(runs map[drama3.TakeID]*takeRun, id drama3.TakeID) takeRun {
	if r := runs[id]; r != nil {
		return *r
	}
	return takeRun{}
}

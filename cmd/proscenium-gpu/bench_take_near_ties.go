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

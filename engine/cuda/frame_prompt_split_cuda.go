//go:build cuda

package cuda

import "proscenium/engine/drama3"

// A take in a voice the cache does not hold runs its voice prefix as passes
// of its own (its state is snapshotted where the prefix ends), then its
// script: under a host tier every pass copies each host layer's experts
// onto the stage, so the prompt carried them over the bus once for the
// prefix and once more for the script, even where the two fit one pass's
// rows. There the prefix's last pass and the script run as one split pass
// (Backbone.PrefillSplit): each layer's experts cross the bus once for
// both, every row's result the two passes' bit for bit. The snapshot takes
// each DeltaNet layer's state between the two parts of the layer (the
// script's rows go on to change it), and the rows of the KV caches after the
// pass (the script's rows are appended behind them).

// SplitPrefix says whether a prompt may run its voice prefix's last pass
// and its script as one split pass where the split pays (a host tier) and
// fits (Backbone.SplitFits), and takes begun together likewise run a voice
// prefix's last pass and the scripts after it (frame_takes_split_cuda.go):
// true, the product's way; false runs them as two passes (bench-take
// -prefix-pass apart, and the tests, compare the two). Set it between
// takes.
var SplitPrefix = true

// splitsPrefix says whether a prompt of n rows whose voice prefix of
// prefix rows is not restored runs the prefix's last pass and the rest as
// one split pass.
func (f *Frames) splitsPrefix(prefix, n int) bool {
	if !SplitPrefix || f.bb.W.Stage == nil {
		return false
	}
	from := (prefix - 1) / f.bb.Plan.Chunk * f.bb.Plan.Chunk // the prefix's last pass
	return f.bb.SplitFits(prefix-from, n-from)
}

// prefillSplit runs rows — the voice prefix's last cut rows, then the rest
// of the prompt — as one split pass, then backboneDone, then tower (the
// tower's rows of the pass, enqueued on the stream), keeping the state
// after the prefix (prefix rows) in the voice cache under key where there is
// a cache and room (snapshotBlock).
func (f *Frames) prefillSplit(rows []BackboneRow, cut int, key drama3.PrefixKey, prefix int, backboneDone func() error, tower func(q *Queue) error) error {
	var regions []stateRegion
	var block *Block
	if f.prefixes != nil {
		regions, block = f.snapshotBlock(prefix)
	}
	var between func(q *Queue, layer int) error
	if block != nil {
		between = func(q *Queue, layer int) error {
			return enqueueRegionCopies(q, regions, block, true, func(r stateRegion) bool { return r.deltaNet && r.layer == layer })
		}
	}
	err := f.bb.PrefillSplit(rows, cut, between)
	if err == nil {
		err = backboneDone()
	}
	if err == nil {
		if err = f.d.Run(func(q *Queue) error {
			if err := tower(q); err != nil {
				return err
			}
			if block == nil {
				return nil
			}
			return enqueueRegionCopies(q, regions, block, true, func(r stateRegion) bool { return !r.deltaNet })
		}); err != nil {
			f.fault = err
		}
	}
	if err != nil {
		if block != nil {
			f.d.Free(block)
		}
		return err
	}
	if block != nil {
		f.prefixes.Put(key, &prefixSnapshot{d: f.d, block: block, rows: prefix})
	}
	f.lastSplit = true
	return nil
}

// LastSplit says whether the last prompt begun ran its voice prefix's last
// pass and its script as one split pass.
func (f *Frames) LastSplit() bool { return f.lastSplit }

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
	if !f.bb.splitPays() {
		return false
	}
	from := (prefix - 1) / f.bb.Plan.Chunk * f.bb.Plan.Chunk // the prefix's last pass
	return f.bb.SplitFits(prefix-from, n-from)
}

// prefillSplit runs rows — the voice prefix's last cut rows, then the rest
// of the prompt — as one split pass, then backboneDone, then tower (the
// tower's rows of the pass, enqueued on the stream), keeping the state
// after the prefix (prefix rows) in the voice cache under key where there is
// a cache and room (prefixShare).
func (f *Frames) prefillSplit(rows []BackboneRow, cut int, key drama3.PrefixKey, prefix int, backboneDone func() error, tower func(q *Queue) error) error {
	sh := f.newPrefixShare(key, prefix)
	defer sh.release(f.d)
	err := f.bb.PrefillSplit(rows, cut, sh.layer)
	if err == nil {
		err = backboneDone()
	}
	if err != nil {
		return err
	}
	if err := f.d.Run(func(q *Queue) error {
		if err := tower(q); err != nil {
			return err
		}
		return sh.snapshotRest(q)
	}); err != nil {
		f.fault = err
		return err
	}
	sh.keep(f)
	f.lastSplit = true
	return nil
}

// prefixShare is a voice prefix that a take ends in the first part of a
// split pass (a lone take's, prefillSplit, or a joint one's,
// frame_takes_split_cuda.go): the take's state after the prefix's rows
// (regions), copied layer by layer into the voice cache's snapshot (block;
// nil where there is no cache or no room) and into the regions of each take
// that shares the voice in the same pass (to).
type prefixShare struct {
	key     drama3.PrefixKey
	rows    int
	regions []stateRegion
	block   *Block
	to      [][]stateRegion
}

// newPrefixShare is the share of f's take's voice prefix of rows rows
// under key, with a snapshot block where the cache has room.
func (f *Frames) newPrefixShare(key drama3.PrefixKey, rows int) *prefixShare {
	sh := &prefixShare{key: key, rows: rows}
	if f.prefixes != nil {
		sh.regions, sh.block = f.snapshotBlock(rows)
	} else {
		sh.regions = f.prefixRegions(rows)
	}
	return sh
}

// layer is the share's work between the parts of layer i: the layer's
// state after the prefix into the takes that share it, and its DeltaNet
// state into the snapshot (the script's rows go on to change it; the KV
// rows of the prefix stay, and are snapshotted after the pass).
func (sh *prefixShare) layer(q *Queue, i int) error {
	if sh.block != nil {
		if err := enqueueRegionCopies(q, sh.regions, sh.block, true, func(r stateRegion) bool { return r.deltaNet && r.layer == i }); err != nil {
			return err
		}
	}
	for _, to := range sh.to {
		if err := enqueueRegionPairs(q, sh.regions, to, func(r stateRegion) bool { return r.layer == i }); err != nil {
			return err
		}
	}
	return nil
}

// tower copies the prefix's tower rows, once made, into the takes that
// share it.
func (sh *prefixShare) tower(q *Queue) error {
	for _, to := range sh.to {
		if err := enqueueRegionPairs(q, sh.regions, to, func(r stateRegion) bool { return r.layer < 0 }); err != nil {
			return err
		}
	}
	return nil
}

// snapshotRest enqueues the rest of the snapshot, once the pass and its
// tower rows are enqueued: the KV rows of the prefix, backbone's and
// tower's.
func (sh *prefixShare) snapshotRest(q *Queue) error {
	if sh.block == nil {
		return nil
	}
	return enqueueRegionCopies(q, sh.regions, sh.block, true, func(r stateRegion) bool { return !r.deltaNet })
}

// keep puts the snapshot, enqueued in full, into f's voice cache.
func (sh *prefixShare) keep(f *Frames) {
	if sh.block != nil {
		f.prefixes.Put(sh.key, &prefixSnapshot{d: f.d, block: sh.block, rows: sh.rows})
		sh.block = nil
	}
}

// release frees the snapshot when it was not kept.
func (sh *prefixShare) release(d *Device) {
	if sh.block != nil {
		d.Free(sh.block)
		sh.block = nil
	}
}

// LastSplit says whether the last prompt begun ran its voice prefix's last
// pass and its script as one split pass.
func (f *Frames) LastSplit() bool { return f.lastSplit }

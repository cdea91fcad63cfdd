//go:build cuda

package cuda

import "proscenium/engine/drama3"

// A joint begin (BeginMany) under a host tier, where a take's voice
// prefix ends in its next pass: every pass copies each host layer's experts
// onto the stage, so the take's prefix pass and the joint pass of the
// scripts after it carried them over the bus twice, as a lone take's did
// before its split pass (frame_prompt_split_cuda.go). Here the two run as
// one split joint pass (Backbone.PrefillSlotsSplit): the first group is the
// prefix passes that end a voice, the second the scripts — the prefilling
// takes' own, those of the takes begun in the same voice, which used to wait
// for the voice cache (jointWait), and any other take's next pass. Between
// the groups of each layer the layer's state after the prefix is copied,
// device to device, into the slots of the takes that share the voice (its
// DeltaNet state, or its KV rows of the prefix), and the DeltaNet state into
// the voice cache's snapshot; after the first group's tower rows the
// prefix's tower rows are copied too. Every take's rows are then computed as
// in the passes it ran before: its own prefix's, or the cache's copy of the
// same (exact: the same codes). Four takes begun together in a new 10 s
// voice under a 30 GiB cap began in 455 ms instead of 577, their first
// audio 486–511 ms instead of 604–626 (an H100, docs/PERF.md session 39).

// passEntry is one take's pass in a joint pass.
type passEntry struct {
	tk   *jointTake
	pass promptPass
}

// jointPass is one joint pass as planned (TakeFrames.planPass): its entries
// in the order of their rows, the first cut of them a split pass's first
// group (0: one joint pass), and the voice prefixes the split shares.
type jointPass struct {
	plan    *BackbonePlan
	entries []passEntry
	cut     int
	shares  []*prefixShare
	rows    int
	blocks  int
}

// fits says whether passes of ns rows more fit the pass (Plan.Chunk rows,
// JointBlockLimit mixer blocks).
func (jp *jointPass) fits(ns ...int) bool {
	rows, blocks := jp.rows, jp.blocks
	for _, n := range ns {
		rows += n
		blocks += jp.plan.JointBlocks(n)
	}
	return rows <= jp.plan.Chunk && blocks <= jp.plan.JointBlockLimit()
}

// count adds a pass's rows to the pass's.
func (jp *jointPass) count(ps promptPass) {
	jp.rows += ps.to - ps.from
	jp.blocks += jp.plan.JointBlocks(ps.to - ps.from)
}

// planPass plans the next joint pass into jp: where a split pays
// (Backbone.splitPays), each take
// whose next pass ends its voice prefix in the first group with its script's
// first pass in the second, and the starts waiting for that voice begun now
// (shared) with their scripts' first passes there too; then every other
// take's next pass where it fits. It returns the takes with those begun and
// the starts still waiting; a start refused, or whose context ended, gets
// its error in errs. A non-nil error is a device fault (jp's blocks are the
// caller's to release).
func (s *TakeFrames) planPass(jp *jointPass, takes []*jointTake, waiting []jointWait, errs []error) ([]*jointTake, []jointWait, error) {
	jp.plan = s.f.bb.Plan
	var first, second []passEntry
	in := map[*jointTake]bool{}
	if s.f.bb.splitPays() {
		for _, tk := range takes {
			if len(tk.passes) < 2 || !tk.passes[0].keep {
				continue
			}
			one, two := tk.passes[0], tk.passes[1]
			if !jp.fits(one.to-one.from, two.to-two.from) {
				continue
			}
			jp.count(one)
			jp.count(two)
			first, second = append(first, passEntry{tk, one}), append(second, passEntry{tk, two})
			in[tk] = true
			jp.shares = append(jp.shares, tk.v.newPrefixShare(tk.ps.key, tk.ps.prefix))
		}
		var still []jointWait
		for _, w := range waiting {
			sh := jp.shareOf(w.key)
			n := 0
			if sh != nil {
				n = min(jp.plan.Chunk, len(w.st.Prompt)-sh.rows)
			}
			if sh == nil || !jp.fits(n) {
				still = append(still, w) // begins from the cache after the pass
				continue
			}
			tk, err := s.beginWaiting(w, true, errs)
			if err != nil {
				return takes, waiting, err
			}
			if tk == nil {
				continue // refused or stopped: its error is in errs
			}
			takes = append(takes, tk)
			in[tk] = true
			jp.count(tk.passes[0])
			second = append(second, passEntry{tk, tk.passes[0]})
			if tk.ps.shared {
				sh.to = append(sh.to, tk.v.prefixRegions(sh.rows))
			}
		}
		waiting = still
	}
	for _, tk := range takes {
		if in[tk] || len(tk.passes) == 0 {
			continue
		}
		if ps := tk.passes[0]; jp.fits(ps.to - ps.from) {
			jp.count(ps)
			second = append(second, passEntry{tk, ps})
		}
	}
	jp.entries = append(first, second...)
	jp.cut = len(first)
	return takes, waiting, nil
}

// shareOf is the share of the voice prefix key in the pass (nil: none).
func (jp *jointPass) shareOf(key drama3.PrefixKey) *prefixShare {
	for _, sh := range jp.shares {
		if sh.key == key {
			return sh
		}
	}
	return nil
}

// parts is the pass's rows, an entry a part, as the backbone takes them:
// each audio row its feedback row (the next of its take's: a take's
// entries are in the order of its rows).
func (jp *jointPass) parts(H int) []SlotRows {
	parts := make([]SlotRows, len(jp.entries))
	for k, e := range jp.entries {
		tk := e.tk
		part := SlotRows{Slot: tk.slot, Rows: make([]BackboneRow, e.pass.to-e.pass.from)}
		for j, row := range tk.st.Prompt[e.pass.from:e.pass.to] {
			part.Rows[j].Token = row.Token
			if row.Codes != nil {
				part.Rows[j].Embedding, tk.emb = tk.emb[:H:H], tk.emb[H:]
			}
		}
		parts[k] = part
	}
	return parts
}

// shareLayer is the split pass's work between its groups of layer i: each
// share's (prefixShare.layer).
func (jp *jointPass) shareLayer(q *Queue, i int) error {
	for _, sh := range jp.shares {
		if err := sh.layer(q, i); err != nil {
			return err
		}
	}
	return nil
}

// shareTower copies each shared prefix's tower rows, once the first
// group's tower rows made them, into the takes that share it.
func (jp *jointPass) shareTower(q *Queue) error {
	for _, sh := range jp.shares {
		if err := sh.tower(q); err != nil {
			return err
		}
	}
	return nil
}

// snapshotRest enqueues the rest of each share's snapshot, once the pass
// and its tower rows are enqueued.
func (jp *jointPass) snapshotRest(q *Queue) error {
	for _, sh := range jp.shares {
		if err := sh.snapshotRest(q); err != nil {
			return err
		}
	}
	return nil
}

// keepShares puts each share's snapshot into the voice cache (f's).
func (jp *jointPass) keepShares(f *Frames) {
	for _, sh := range jp.shares {
		sh.keep(f)
	}
}

// release frees the snapshots not kept.
func (jp *jointPass) release(d *Device) {
	for _, sh := range jp.shares {
		sh.release(d)
	}
}

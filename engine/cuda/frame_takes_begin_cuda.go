//go:build cuda

package cuda

import (
	"fmt"
	"slices"
	"time"

	"gorgonia.org/cu"

	"proscenium/engine/drama3"
)

// This file begins several takes of a TakeFrames at once (BeginMany): each
// take's prompt is checked and its slot begun as Begin does
// (Frames.startPrompt: the voice prefix restored from the cache when it is
// there), then the passes each take would run alone (its voice prefix's,
// snapshotted into the cache after the last of them, then its script's)
// share joint backbone passes (Backbone.PrefillSlots: every weight read
// once for the rows of every take in the pass), each take's tower prompt
// rows run on its own rows of the pass, and the takes' first frames are one
// B-row tower frame (Tower.FrameRows) on their prompts' last rows. A take
// whose context ends between two passes leaves; a take whose prompt is
// refused fails alone. Takes in one voice the cache does not hold yet (the
// studio's variations of a line in a new voice, or requests in it sent
// together) prefill its prefix once: the first of them prefills and keeps
// it, and each other waits (its slot held) until that take's prefix is kept,
// then begins from the cache, as a later take in the voice would; if the
// first leaves before, or the cache cannot hold the prefix, they begin
// prefilling their own.

// jointTake is one take of a BeginMany.
type jointTake struct {
	i      int // its index in the starts
	st     drama3.TakeStart
	slot   int
	v      *Frames
	ps     *promptStart
	passes []promptPass // still to run, in order
	emb    []float32    // the feedback rows of its audio rows not yet passed
	first  bool         // its last row is at lastRows[row]
	row    int
}

// jointWait is a start of a BeginMany whose voice prefix another of its
// takes prefills (key): it holds its slot and row and begins once no take
// is still to keep that prefix (startWaiting).
type jointWait struct {
	i    int
	st   drama3.TakeStart
	slot int
	row  int
	key  drama3.PrefixKey
}

// promptPass is one pass of a take's rows alone: rows [from, to); keep: the
// voice prefix ends there (its state goes to the cache after the pass).
type promptPass struct {
	from, to int
	keep     bool
}

// promptPasses is the passes BeginPrompt runs for p (chunk rows each): the
// voice prefix's when it was not restored, then the rest.
func promptPasses(ps *promptStart, rows, chunk int) []promptPass {
	var out []promptPass
	add := func(lo, hi int, keep bool) {
		for from := lo; from < hi; from += chunk {
			to := min(from+chunk, hi)
			out = append(out, promptPass{from: from, to: to, keep: keep && to == hi})
		}
	}
	if ps.snap == nil && !ps.shared && ps.prefix > 0 {
		add(0, ps.prefix, true)
	}
	add(max(ps.start, ps.prefix), rows, false)
	return out
}

// BeginMany implements drama3.TakeSet: one take is Begin; several share
// joint prefill passes (the file's comment). errs[i] is starts[i]'s.
func (s *TakeFrames) BeginMany(starts []drama3.TakeStart) []error {
	errs := make([]error, len(starts))
	if len(starts) == 1 {
		st := starts[0]
		errs[0] = s.Begin(st.Ctx, st.ID, st.Prompt, st.Settings, st.Seed)
		return errs
	}
	failRest := func(err error) []error {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return errs
	}
	if s.closed {
		return failRest(fmt.Errorf("take set: closed"))
	}
	if err := s.settle(); err != nil {
		return failRest(err)
	}
	// The takes' prompts' last rows, the first frames' input [takes, Hidden].
	lastRows, err := s.f.allocForTake(int64(len(starts)) * int64(s.f.bb.Plan.H) * 4)
	if err != nil {
		return failRest(fmt.Errorf("take set: the first frames' rows: %w", err))
	}
	defer s.d.Free(lastRows)
	takes, waiting, err := s.startJoint(starts, errs)
	defer func() {
		for _, tk := range takes {
			s.d.Free(tk.ps.codes)
		}
	}()
	if err == nil {
		takes, err = s.jointPasses(takes, waiting, errs, lastRows)
	}
	if err == nil {
		// Takes that waited for a voice began after the others: the first
		// frames' rows go in row order.
		slices.SortFunc(takes, func(a, b *jointTake) int { return a.row - b.row })
		err = s.jointFirstFrames(takes, lastRows)
	}
	if err != nil {
		s.setFault(err)
		for _, tk := range takes {
			tk.v.begun = false
			errs[tk.i] = err
		}
		return failRest(err) // starts still waiting for a voice too
	}
	for _, tk := range takes {
		tk.v.begun = true
		s.live[tk.st.ID] = tk.slot
		s.slotLive[tk.slot] = true
		s.free = slices.DeleteFunc(s.free, func(f int) bool { return f == tk.slot })
	}
	return errs
}

// startJoint places each start in a free slot and begins it there
// (startPrompt), or, when an earlier start prefills the same voice prefix,
// holds the slot for it (jointWait); a start refused gets its error in errs
// and no slot. A non-nil error is a device fault.
func (s *TakeFrames) startJoint(starts []drama3.TakeStart, errs []error) ([]*jointTake, []jointWait, error) {
	var takes []*jointTake
	var waiting []jointWait
	prefilling := map[drama3.PrefixKey]bool{} // voice prefixes a take here prefills and keeps
	avail := slices.Clone(s.free)             // lowest last
	ids := map[drama3.TakeID]bool{}
	rows := 0 // the first frames' rows given out
	for i, st := range starts {
		_, live := s.live[st.ID]
		switch {
		case live || ids[st.ID]:
			errs[i] = fmt.Errorf("take set: take %d is already live", st.ID)
			continue
		case len(avail) == 0:
			errs[i] = fmt.Errorf("take set: %d takes are live, the most it holds", len(s.live)+len(takes))
			continue
		case st.Ctx.Err() != nil:
			errs[i] = st.Ctx.Err()
			continue
		}
		// The joint passes take every take's rows at once: a bad token
		// is refused here, before anything changes (Prefill's check).
		if err := s.f.bb.checkPromptTokens(st.Prompt); err != nil {
			errs[i] = fmt.Errorf("take set: take %d: %w", st.ID, err)
			continue
		}
		slot := avail[len(avail)-1]
		if prefix := st.Prompt.VoicePrefix(); prefix > 0 && s.f.prefixes != nil {
			if key := st.Prompt.PrefixKey(prefix, s.f.prefixSalt()); prefilling[key] {
				avail = avail[:len(avail)-1]
				ids[st.ID] = true
				waiting = append(waiting, jointWait{i: i, st: st, slot: slot, row: rows, key: key})
				rows++
				continue
			}
		}
		tk, err := s.startJointTake(i, st, slot, rows, false, errs)
		if tk == nil {
			if err != nil {
				return takes, waiting, err
			}
			continue
		}
		avail = avail[:len(avail)-1]
		ids[st.ID] = true
		rows++
		takes = append(takes, tk)
		if tk.ps.snap == nil && tk.ps.prefix > 0 {
			prefilling[tk.ps.key] = true
		}
	}
	return takes, waiting, nil
}

// startJointTake begins start i in slot (startPrompt; shared: its voice
// prefix's state to be copied in by the pass that makes it) as the take of
// the first frames' row: nil, with its error in errs[i], when its prompt is
// refused; a non-nil error is a device fault.
func (s *TakeFrames) startJointTake(i int, st drama3.TakeStart, slot, row int, shared bool, errs []error) (*jointTake, error) {
	v, err := s.slotFrames(slot)
	if err != nil {
		errs[i] = fmt.Errorf("take set: take %d: %w", st.ID, err)
		return nil, nil
	}
	if err := s.f.bb.UseSlot(slot); err != nil {
		return nil, err
	}
	ps, err := v.startPrompt(st.Prompt, st.Settings, st.Seed, shared)
	if err != nil {
		if v.fault != nil {
			return nil, v.fault
		}
		errs[i] = err
		return nil, nil
	}
	v.lastPrefix = drama3.PrefixOutcome{Rows: ps.prefix, Restored: ps.start > 0, Prefilled: len(st.Prompt) - ps.start}
	return &jointTake{i: i, st: st, slot: slot, v: v, ps: ps, row: row,
		passes: promptPasses(ps, len(st.Prompt), s.f.bb.Plan.Chunk), emb: ps.emb}, nil
}

// jointPasses runs the takes' passes, as many takes' next passes in each
// joint pass as fit (planPass: under a host tier a split pass where a
// take's voice prefix ends), until every take has run its last; a take
// whose context ended leaves (its error in errs) before the next pass. A
// waiting start begins before the pass after its voice's prefix was kept
// (startWaiting), or in the split pass that makes it. It returns the takes
// still in.
func (s *TakeFrames) jointPasses(takes []*jointTake, waiting []jointWait, errs []error, lastRows *Block) ([]*jointTake, error) {
	for {
		takes = slices.DeleteFunc(takes, func(tk *jointTake) bool {
			if err := tk.st.Ctx.Err(); err != nil {
				errs[tk.i] = err
				s.d.Free(tk.ps.codes)
				return true
			}
			return false
		})
		var err error
		if takes, waiting, err = s.startWaiting(takes, waiting, errs); err != nil {
			return takes, err
		}
		jp := &jointPass{}
		takes, waiting, err = s.planPass(jp, takes, waiting, errs)
		if err == nil && len(jp.entries) == 0 {
			return takes, nil
		}
		if err == nil {
			err = s.runPass(jp, lastRows)
		}
		jp.release(s.d) // the snapshots a failed pass did not keep
		if err != nil {
			return takes, err
		}
	}
}

// runPass runs the joint pass jp plans: the backbone's pass (a split one
// where jp is cut), its rows' routing to the tap, each entry's tower rows,
// the voice prefixes it ends into the cache; then each entry's pass is
// done.
func (s *TakeFrames) runPass(jp *jointPass, lastRows *Block) error {
	b := s.f.bb
	t0 := time.Now()
	parts := jp.parts(b.Plan.H)
	var between func(q *Queue, layer int) error
	if jp.cut > 0 {
		between = jp.shareLayer
	}
	if err := b.PrefillSlotsSplit(parts, jp.cut, between); err != nil {
		return err
	}
	if err := s.tapJointRoutes(jp.entries, parts); err != nil {
		return err
	}
	if err := s.profile(&t0, func(pt *PromptTimes) *time.Duration { return &pt.Backbone }); err != nil {
		return err
	}
	if err := s.jointTowerRows(jp, lastRows); err != nil {
		return err
	}
	jp.keepShares(s.f) // the split pass's voice prefixes into the cache
	if jp.cut > 0 {
		s.splits.Passes++
		for _, sh := range jp.shares {
			s.splits.Shared += len(sh.to)
		}
	}
	if err := s.profile(&t0, func(pt *PromptTimes) *time.Duration { return &pt.Tower }); err != nil {
		return err
	}
	for k, e := range jp.entries {
		e.tk.passes = e.tk.passes[1:]
		if k >= jp.cut && e.pass.keep && s.f.prefixes != nil { // a split pass's first group kept its own
			if err := b.UseSlot(e.tk.slot); err != nil {
				return err
			}
			if err := e.tk.v.keepPrefix(e.tk.ps.key, e.tk.ps.prefix); err != nil {
				return err
			}
		}
	}
	return nil
}

// startWaiting begins each waiting start whose voice prefix no take is
// still to keep (its prefix kept into the cache by now, or its prefiller
// gone): from the cache where it holds the prefix, else prefilling it. It
// returns the takes with those begun and the starts still waiting; a start
// refused, or whose context ended, gets its error in errs.
func (s *TakeFrames) startWaiting(takes []*jointTake, waiting []jointWait, errs []error) ([]*jointTake, []jointWait, error) {
	keeping := map[drama3.PrefixKey]bool{}
	for _, tk := range takes {
		if slices.ContainsFunc(tk.passes, func(ps promptPass) bool { return ps.keep }) {
			keeping[tk.ps.key] = true
		}
	}
	var still []jointWait
	for _, w := range waiting {
		if keeping[w.key] {
			still = append(still, w)
			continue
		}
		tk, err := s.beginWaiting(w, false, errs)
		if err != nil {
			return takes, still, err
		}
		if tk != nil {
			takes = append(takes, tk)
		}
	}
	return takes, still, nil
}

// beginWaiting begins the waiting start w in its slot and row
// (startJointTake; shared: its voice prefix's state to be copied in by the
// pass that makes it): nil, with its error in errs, when its context ended
// or its prompt is refused; a non-nil error is a device fault.
func (s *TakeFrames) beginWaiting(w jointWait, shared bool, errs []error) (*jointTake, error) {
	if err := w.st.Ctx.Err(); err != nil {
		errs[w.i] = err
		return nil, nil
	}
	return s.startJointTake(w.i, w.st, w.slot, w.row, shared, errs)
}

// jointTowerRows runs each entry's tower prompt rows of the joint pass just
// enqueued (rows [from, min(to, last)) of its pass, each forced to the
// frame after it or a text row: BeginPrompt's) on its rows of Out, and
// keeps the last row of a take whose prompt ends in this pass at its row of
// the first frames' input (lastRows). After a split pass's first group it
// copies each shared voice prefix's tower rows into the takes that share it,
// and after the last group it snapshots what the voice cache keeps of the
// split's prefixes (prefixShare).
func (s *TakeFrames) jointTowerRows(jp *jointPass, lastRows *Block) error {
	b := s.f.bb
	H := int64(b.Plan.H)
	ncb := len(s.f.entries)
	out := b.t(b.Plan.Out)
	return s.d.Run(func(q *Queue) error {
		at := 0 // the entry's first row in the pass
		for k, e := range jp.entries {
			if k == jp.cut && k > 0 {
				if err := jp.shareTower(q); err != nil {
					return err
				}
			}
			tk, pass := e.tk, e.pass
			last := len(tk.st.Prompt) - 1
			if end := min(pass.to, last); end > pass.from {
				rc := Whole(tk.ps.codes).At(int64(pass.from-tk.ps.start) * int64(ncb) * 4)
				if err := tk.v.tower.PromptRows(q, out.At(int64(at)*H*4), end-pass.from, rc, ncb); err != nil {
					return err
				}
			}
			if pass.to == len(tk.st.Prompt) {
				src := out.At(int64(at+last-pass.from) * H * 4)
				if err := cu.MemcpyDtoDAsync(cu.DevicePtr(lastRows.Ptr+uintptr(int64(tk.row)*H*4)), cu.DevicePtr(src.addr()), H*4, q.Stream()); err != nil {
					return err
				}
				tk.first = true
			}
			at += pass.to - pass.from
		}
		return jp.snapshotRest(q)
	})
}

// jointFirstFrames makes every take's frame 0 in one B-row tower frame on
// its prompt's last row (lastRows[row]), kept for its first Step as Begin
// keeps it.
func (s *TakeFrames) jointFirstFrames(takes []*jointTake, lastRows *Block) error {
	if len(takes) == 0 {
		return nil
	}
	b := s.f.bb
	p := b.Plan
	H := int64(p.H)
	slots := make([]int32, len(takes))
	for k, tk := range takes {
		if !tk.first {
			return fmt.Errorf("cuda frames: take %d's prompt did not end in its passes", tk.st.ID)
		}
		slots[k] = int32(tk.slot)
	}
	// Every later backbone row is an embedding (the feedback row), as
	// BeginPrompt leaves it.
	if err := firstErr(Upload(s.d, b.work, p.Toks, []int32{-1}), Upload(s.d, b.work, p.RowSlots, slots)); err != nil {
		return err
	}
	err := s.d.Run(func(q *Queue) error {
		// A take that left (its context ended) leaves its row empty: the
		// rows close up, each moving down (row ≥ k, in order).
		for k, tk := range takes {
			if tk.row != k {
				dst, src := lastRows.Ptr+uintptr(int64(k)*H*4), lastRows.Ptr+uintptr(int64(tk.row)*H*4)
				if err := cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), H*4, q.Stream()); err != nil {
					return err
				}
			}
		}
		if err := s.f.tower.FrameRows(q, Whole(lastRows), len(takes), b.t(p.RowSlots)); err != nil {
			return err
		}
		return s.f.tower.CopyResultRows(q, s.pinned)
	})
	if err != nil {
		return err
	}
	if err := s.d.Sync(); err != nil {
		return err
	}
	for k, tk := range takes {
		s.made[tk.slot] = []FrameResult{s.f.tower.ReadResultRow(s.pinned, tk.slot)}
		if err := s.tapRow(tk.st.ID, 0, s.f.tower, k); err != nil {
			return err
		}
	}
	return nil
}

// profile adds the wall time since *t0 to the part of PromptProfile that
// part names, once the device is done (nothing without a profile), and
// restarts *t0.
func (s *TakeFrames) profile(t0 *time.Time, part func(*PromptTimes) *time.Duration) error {
	if PromptProfile == nil {
		return nil
	}
	if err := s.d.Sync(); err != nil {
		return err
	}
	*part(PromptProfile) += time.Since(*t0)
	*t0 = time.Now()
	return nil
}

//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"time"

	"gorgonia.org/cu"

	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// This file is the prefill of the frame backend for any prompt, reference
// frames included (drama3.PromptBackend), with the CPU reference's semantics
// (engine/cpu backend_prompt.go): the backbone takes every row, audio rows as
// the feedback rows of their codes, made on the device by the kernel the
// frame graph uses for its own feedback row; the tower sees the prompt as if
// the reference frames had been teacher-forced [assumption, docs/MODEL.md
// "Reference voices"]: a row whose next row is a reference frame goes
// through every tower layer forced to that frame's codes (the frame the row
// would have predicted). Every code of a forced row is known before its
// tower pass, so the rows of a backbone pass, text and forced alike, go
// through the tower as one batched pass (Tower.PromptRows). A prompt's voice
// prefix (drama3.Prompt.VoicePrefix) runs as a pass of its
// own and its state is kept in the voice prefix cache, or restored from it
// when the cache holds it (frame_prefix_cuda.go).

var _ drama3.PromptBackend = (*Frames)(nil)

// PromptProfile, when not nil, makes BeginPrompt wait for the device after
// each part of a prompt and add the part's wall time here (bench-take
// -prompt-profile: where a prefill's time goes). The waits cost a little
// time of their own; the product leaves it nil.
var PromptProfile *PromptTimes

// PromptTimes is where BeginPrompt's time went.
type PromptTimes struct {
	Feedback time.Duration // the reference frames' feedback rows
	Backbone time.Duration // the backbone's passes
	Tower    time.Duration // the tower's rows: text runs and forced frames
	Frames   int           // reference frames prefilled (forced tower rows)
}

// promptStart is a take's prompt checked and its state begun
// (Frames.startPrompt), before the passes over its rows.
type promptStart struct {
	prefix int              // the voice prefix's rows (0: none)
	key    drama3.PrefixKey // its key in the voice prefix cache
	snap   *prefixSnapshot  // its cached state, restored (nil: prefilled or shared)
	// shared: the state after its voice prefix is another take's, copied
	// into its slot by the joint split pass that makes it (prefixShare).
	shared bool
	start  int       // the first row the take prefills (prefix when restored or shared)
	emb    []float32 // the feedback rows of the audio rows from start on, [audio, Hidden]
	codes  *Block    // the tower's codes of rows start… (uploadRowCodes; the caller frees it)
}

// startPrompt is what a take's prefill does before its passes (BeginPrompt,
// and each take of a joint prefill, frame_takes_begin_cuda.go): the prompt
// checked against the codebooks before anything changes on the device, its
// voice prefix looked up in the cache, the audio rows' feedback rows and the
// tower's codes made, the backbone's rows (the take's slot's) reset or
// restored from the cache, the tower begun with the settings and seed.
// shared (a take of a joint begin whose voice another take prefills in
// the same pass, prefixShare) begins the take at its voice prefix's end as
// a restored one does, the state there left to the pass to copy in.
func (f *Frames) startPrompt(p drama3.Prompt, s sampling.Settings, seed uint64, shared bool) (*promptStart, error) {
	if f.closed {
		return nil, fmt.Errorf("cuda frames: closed")
	}
	f.begun = false
	if err := f.settle(); err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("cuda frames: empty prompt")
	}
	if len(p)+1 > f.opt.Capacity {
		return nil, fmt.Errorf("cuda frames: a prompt of %d tokens leaves no room for frames in a context of %d rows", len(p), f.opt.Capacity)
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if p[0].Codes != nil {
		return nil, fmt.Errorf("cuda frames: a prompt cannot start with an audio row (no row predicts it)")
	}
	for r, row := range p {
		if row.Codes == nil {
			continue
		}
		if len(row.Codes) != len(f.entries) {
			return nil, fmt.Errorf("cuda frames: prompt row %d: %d codes, the model has %d codebooks", r, len(row.Codes), len(f.entries))
		}
		for c, v := range row.Codes {
			if v < 0 || v >= f.entries[c] {
				return nil, fmt.Errorf("cuda frames: prompt row %d: code %d of codebook %d outside [0, %d)", r, v, c, f.entries[c])
			}
		}
	}
	// The voice prefix always runs as its own pass, as on the CPU: a take
	// restored from the cache then computes what an uncached take does.
	prefix := p.VoicePrefix()
	var key drama3.PrefixKey
	var snap *prefixSnapshot
	if prefix > 0 && f.prefixes != nil {
		key = p.PrefixKey(prefix, f.prefixSalt())
		if held, ok := f.prefixes.Get(key); ok {
			if snap, ok = held.(*prefixSnapshot); !ok {
				return nil, fmt.Errorf("cuda frames: the prefix cache holds a %T, not a GPU snapshot", held)
			}
		}
	}
	if prefix == 0 || snap != nil {
		shared = false
	}
	start := 0 // the first row this take prefills
	if snap != nil || shared {
		start = prefix
	}
	rest := p[start:]
	t0 := time.Now()
	emb, err := f.promptFeedbackRows(rest, rest.AudioRows())
	if err != nil {
		return nil, err
	}
	if PromptProfile != nil {
		PromptProfile.Feedback += time.Since(t0)
		PromptProfile.Frames += rest.AudioRows()
	}
	codes, err := f.uploadRowCodes(p, start)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			f.d.Free(codes)
		}
	}()

	if start == 0 {
		if err := f.resetBackbone(); err != nil {
			return nil, err
		}
	}
	if err := f.tower.Begin(s, seed); err != nil {
		return nil, err
	}
	if err := f.tower.Force(nil); err != nil {
		return nil, err
	}
	if start > 0 {
		if snap != nil {
			err = f.restorePrefix(snap)
		} else {
			err = f.bb.SetLen(prefix) // the slot the take is in (Backbone.UseSlot)
		}
		if err != nil {
			return nil, err
		}
		if err := f.tower.writeControl(fcPos, []uint32{uint32(prefix)}); err != nil {
			return nil, err
		}
	}
	f.forced = false // (Begin zeroed the row counter: the tower's cache refills from row 0, or the prefix's end)
	f.frame, f.codes = 0, f.codes[:0]
	if f.stream != nil {
		f.stream.Close()
		f.stream = nil
	}
	f.streamNext, f.decoding, f.decoded = 0, nil, nil
	ok = true
	return &promptStart{prefix: prefix, key: key, snap: snap, shared: shared, start: start, emb: emb, codes: codes}, nil
}

// BeginPrompt implements drama3.PromptBackend: Begin for a prompt whose rows
// may carry reference frames. The codes are checked against the codebooks
// before anything changes on the device.
func (f *Frames) BeginPrompt(ctx context.Context, p drama3.Prompt, s sampling.Settings, seed uint64) error {
	ps, err := f.startPrompt(p, s, seed, false)
	if err != nil {
		return err
	}
	defer f.d.Free(ps.codes)
	prefix, key, snap, start, emb, codes := ps.prefix, ps.key, ps.snap, ps.start, ps.emb, ps.codes
	H := f.bb.Plan.H
	last := len(p) - 1
	chunk := f.bb.Plan.Chunk
	ncb := len(f.entries)
	// rowsOf is rows [from, to) as the backbone takes them, each audio row
	// its feedback row (the next of emb: rows are taken in order).
	rowsOf := func(from, to int) []BackboneRow {
		rows := make([]BackboneRow, to-from)
		for i, row := range p[from:to] {
			rows[i].Token = row.Token
			if row.Codes != nil {
				rows[i].Embedding, emb = emb[:H:H], emb[H:]
			}
		}
		return rows
	}
	// towerRows enqueues rows [from, min(to, last)) through the tower in
	// one batched pass, each forced to the frame after it or a text row,
	// their backbone rows at Out from prompt row base on; when the prompt
	// ends at to, its last row goes to Out's row 0 (frame 0 reads it there).
	out := f.bb.t(f.bb.Plan.Out)
	rowAt := func(r, base int) Tensor { return out.At(int64(r-base) * int64(H) * 4) }
	towerRows := func(q *Queue, from, to, base int) error {
		if end := min(to, last); end > from {
			rc := Whole(codes).At(int64(from-start) * int64(ncb) * 4)
			if err := f.tower.PromptRows(q, rowAt(from, base), end-from, rc, ncb); err != nil {
				return err
			}
		}
		if to == len(p) && last > base {
			return cu.MemcpyDtoDAsync(cu.DevicePtr(out.addr()), cu.DevicePtr(rowAt(last, base).addr()), int64(H)*4, q.Stream())
		}
		return nil
	}
	// profile adds the time since *t0 to *part (PromptProfile) once the
	// device is done, and restarts *t0.
	profile := func(t0 *time.Time, part func(*PromptTimes) *time.Duration) error {
		if PromptProfile == nil {
			return nil
		}
		if err := f.d.Sync(); err != nil { // (a pass runs on when its call returns)
			return err
		}
		*part(PromptProfile) += time.Since(*t0)
		*t0 = time.Now()
		return nil
	}
	backbone := func(pt *PromptTimes) *time.Duration { return &pt.Backbone }
	tower := func(pt *PromptTimes) *time.Duration { return &pt.Tower }
	// prefill runs rows [lo, hi) through the backbone in passes of chunk
	// rows, and rows [lo, min(hi, last)) through the tower.
	prefill := func(lo, hi int) error {
		for from := lo; from < hi; from += chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			to := min(from+chunk, hi)
			t0 := time.Now()
			if err := f.bb.PrefillOnDevice(rowsOf(from, to)); err != nil {
				return err
			}
			if err := f.tapPromptRoutes(from); err != nil {
				return err
			}
			if err := profile(&t0, backbone); err != nil {
				return err
			}
			if err := f.d.Run(func(q *Queue) error { return towerRows(q, from, to, from) }); err != nil {
				f.fault = err
				return err
			}
			if err := profile(&t0, tower); err != nil {
				return err
			}
		}
		return nil
	}
	f.lastPrefix = drama3.PrefixOutcome{Rows: prefix, Restored: snap != nil, Prefilled: len(p) - start}
	f.lastSplit = false
	switch {
	case snap == nil && prefix > 0 && f.splitsPrefix(prefix, len(p)):
		from := (prefix - 1) / chunk * chunk // the voice prefix's last pass
		if err := prefill(0, from); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		if err := f.prefillSplit(rowsOf(from, len(p)), prefix-from, key, prefix, func() error { return profile(&t0, backbone) },
			func(q *Queue) error {
				if err := towerRows(q, from, prefix, from); err != nil {
					return err
				}
				return towerRows(q, prefix, len(p), from)
			}); err != nil {
			return err
		}
		if err := profile(&t0, tower); err != nil {
			return err
		}
	case snap == nil && prefix > 0:
		if err := prefill(0, prefix); err != nil {
			return err
		}
		if f.prefixes != nil {
			if err := f.keepPrefix(key, prefix); err != nil {
				return err
			}
		}
		fallthrough
	default:
		if err := prefill(max(start, prefix), len(p)); err != nil {
			return err
		}
	}
	// Every later backbone row is an embedding (the feedback row). Upload
	// returns with the stream drained: the prompt's work is done.
	if err := Upload(f.d, f.bb.work, f.bb.Plan.Toks, []int32{-1}); err != nil {
		return err
	}
	f.begun = true
	return nil
}

// uploadRowCodes puts the tower's codes of prompt rows start… on the device,
// [len(p)−start, codebooks] int32 (Tower.PromptRows): row r's the codes of
// the reference frame at row r+1, or −1 for a text row (the prompt's last
// row is never a forced one: the take's frames start there). The caller
// frees the block.
func (f *Frames) uploadRowCodes(p drama3.Prompt, start int) (*Block, error) {
	ncb := len(f.entries)
	words := make([]int32, (len(p)-start)*ncb)
	for r := start; r < len(p); r++ {
		w := words[(r-start)*ncb : (r-start+1)*ncb]
		if r+1 == len(p) || p[r+1].Codes == nil {
			for c := range w {
				w[c] = -1
			}
			continue
		}
		for c, v := range p[r+1].Codes {
			w[c] = int32(v)
		}
	}
	b, err := f.allocForTake(int64(len(words)) * 4)
	if err != nil {
		return nil, fmt.Errorf("cuda frames: the prompt's tower codes: %w", err)
	}
	if err := Upload(f.d, b, 0, words); err != nil {
		f.d.Free(b)
		return nil, err
	}
	return b, nil
}

// promptFeedbackRows returns the backbone input rows of p's audio rows
// (audio of them), in order, [audio, Hidden]: each row's feedback row,
// computed on the device by the frame's own kernel (Tower.enqueueFeedbackRows)
// from a control block holding its codes.
func (f *Frames) promptFeedbackRows(p drama3.Prompt, audio int) ([]float32, error) {
	if audio == 0 {
		return nil, nil
	}
	H := f.bb.Plan.H
	ctrls := make([]uint32, audio*frameCtrlWords)
	k := 0
	for _, row := range p {
		if row.Codes == nil {
			continue
		}
		for c, v := range row.Codes {
			ctrls[k*frameCtrlWords+fcCodes+c] = uint32(v)
		}
		k++
	}
	cb, err := f.allocForTake(int64(len(ctrls)) * 4)
	if err != nil {
		return nil, fmt.Errorf("cuda frames: the prompt's feedback rows: %w", err)
	}
	defer f.d.Free(cb)
	ob, err := f.allocForTake(int64(audio) * int64(H) * 4)
	if err != nil {
		return nil, fmt.Errorf("cuda frames: the prompt's feedback rows: %w", err)
	}
	defer f.d.Free(ob)
	if err := Upload(f.d, cb, 0, ctrls); err != nil {
		return nil, err
	}
	err = f.d.Run(func(q *Queue) error { return f.tower.enqueueFeedbackRows(q, devPtr(ob), devPtr(cb), audio) })
	if err != nil {
		f.fault = err
		return nil, err
	}
	emb := make([]float32, audio*H)
	if err := Download(f.d, emb, ob, 0); err != nil {
		return nil, err
	}
	return emb, nil
}

// enqueueFeedbackRows enqueues the feedback rows of the codes in n control
// blocks from ctrl on into out ([n, Dim]) in one launch: the frames' own
// kernel body (tower_feedback_takes, block k from control block k into row
// k). One launch a frame cost ≈ 10 µs each, 2.7 ms for a 10 s voice.
func (t *Tower) enqueueFeedbackRows(q *Queue, out, ctrl kernel.Ptr, n int) error {
	g := &t.g
	div := float32(math.Sqrt(float64(len(g.Entries) + 1)))
	return kernel.TowerFeedbackTakes(q, [3]int{n, 1, 1}, 1024, out, tPtr(t.w.TextEmbed), devPtr(t.semTokens), devPtr(t.fbTables), devPtr(t.fbEntries), ctrl, len(g.Entries), g.Dim, div, 0)
}

//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// Takes begun together (TakeFrames.BeginMany: joint prefill passes, one
// B-row tower frame for their first frames) against each take begun and
// made alone (Frames), on the make-tiny checkpoints, with passes of 256
// rows so that several takes' prompts share each pass: a first round of
// four (text prompts and two takes of a line in a reference voice: the
// first prefills its prefix into the voice cache, the second, another seed
// and settings, waits for it and begins from the cache), then a second of
// five into the slots the first left: the same
// voice with another script (its prefix restored from the cache: only the
// script's rows are prefilled), another voice with a code outside its
// codebook and a take whose context has ended (each must fail alone), and
// two text takes. Under exact numerics every take's codes must be those it
// makes alone; under fast the share of equal frames is logged.
func TestTakeFramesBeginTogether(t *testing.T) {
	defer func(rows int, set bool) { prefillRows, prefillRowsSet = rows, set }(prefillRows, prefillRowsSet)
	prefillRows, prefillRowsSet = 4*BackboneChunk, true // as $PROSCENIUM_GPU_PREFILL_ROWS: whatever the plan
	eachTinyCheckpoint(t, func(t *testing.T, dir string) { testTakeFramesBeginTogether(t, dir, 0) })
}

// TestTakeFramesBeginTogetherSplit is TestTakeFramesBeginTogether under a
// host tier (three layers' experts in host memory), where the first round's
// voice prefix and the scripts after it run as one split joint pass: the
// take waiting for the voice begins in that pass, its prefix's state copied
// in from the first's slot layer by layer (frame_takes_split_cuda.go).
func TestTakeFramesBeginTogetherSplit(t *testing.T) {
	defer func(rows int, set bool) { prefillRows, prefillRowsSet = rows, set }(prefillRows, prefillRowsSet)
	prefillRows, prefillRowsSet = 4*BackboneChunk, true
	eachTinyCheckpoint(t, func(t *testing.T, dir string) { testTakeFramesBeginTogether(t, dir, 3) })
}

// testTakeFramesBeginTogether runs the rounds with the set's model under a
// host tier of hostLayers layers (0: none).
func testTakeFramesBeginTogether(t *testing.T, dir string, hostLayers int) {
	const capacity, slots = 400, 4
	ck, alone, text, voice := takesFixture(t, dir, capacity)
	defer alone.Close()
	entries := alone.CodebookEntries()
	// A voice with a code outside codebook 1: refused before anything
	// changes on the device.
	bad := slices.Clone(voice("A voice that cannot be."))
	for i, row := range bad {
		if row.Codes != nil {
			bad[i].Codes = slices.Clone(row.Codes)
			bad[i].Codes[1] = entries[1]
			break
		}
	}
	stopped, stop := context.WithCancel(context.Background())
	stop()
	type joint struct {
		setTake
		ctx  context.Context
		fail bool // must fail (alone)
		// restored: its voice prefix must come from the cache.
		restored bool
	}
	settings := []sampling.Settings{{Temperature: 1, TopP: 0.9, TopK: 30}, {TopP: 1}, {Temperature: 0.7, TopP: 0.8}, {Temperature: 0.9, TopP: 0.95, TopK: 50}}
	bg := context.Background()
	rounds := [][]joint{{
		{setTake{text("The first take, begun with three others."), settings[0], 21, 16}, bg, false, false},
		{setTake{voice("A line in a cloned voice."), settings[2], 22, 14}, bg, false, false},
		{setTake{text("The third, greedy, and a little longer than the others are."), settings[1], 23, 12}, bg, false, false},
		{setTake{voice("A line in a cloned voice."), settings[3], 24, 10}, bg, false, true}, // waits for the second's prefix
	}, {
		{setTake{voice("The same voice says another line."), settings[0], 31, 14}, bg, false, true},
		{setTake{bad, settings[1], 32, 10}, bg, true, false},
		{setTake{text("A take stopped before it began."), settings[1], 33, 10}, stopped, true, false},
		{setTake{text("A text take in the second round."), settings[3], 34, 12}, bg, false, false},
		{setTake{text("And its neighbour."), settings[2], 35, 12}, bg, false, false},
	}}

	opt := FramesOptions{Capacity: capacity, Takes: slots, Batched: true, Pipeline: true}
	var budget int64
	if hostLayers > 0 { // found without a voice cache: under a host tier it lives in host memory
		plain := opt
		plain.PrefixCacheBytes = -1
		budget = hostLayersBudget(t, ck, plain, hostLayers)
	}
	f := loadUnder(t, ck, opt, budget)
	set, err := NewTakeFrames(f)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	same, all := 0, 0
	id := drama3.TakeID(0)
	for round, takes := range rounds {
		starts := make([]drama3.TakeStart, len(takes))
		for i, tk := range takes {
			id++
			starts[i] = drama3.TakeStart{Ctx: tk.ctx, ID: id, Prompt: tk.prompt, Settings: tk.settings, Seed: tk.seed}
		}
		errs := set.BeginMany(starts)
		if len(errs) != len(starts) {
			t.Fatalf("round %d: %d errors for %d takes", round, len(errs), len(starts))
		}
		want := map[drama3.TakeID][][]int{}
		live := map[drama3.TakeID]int{}
		for i, tk := range takes {
			st := starts[i]
			switch {
			case tk.fail && errs[i] == nil:
				t.Fatalf("round %d take %d began; it must fail", round, i)
			case tk.fail:
				t.Logf("round %d take %d fails alone: %v", round, i, errs[i])
				continue
			case errs[i] != nil:
				t.Fatalf("round %d take %d: %v", round, i, errs[i])
			}
			out, ok := set.TakePrefix(st.ID)
			if !ok || out.Restored != tk.restored {
				t.Fatalf("round %d take %d: voice prefix %+v (reported %v), restored from the cache should be %v", round, i, out, ok, tk.restored)
			}
			if err := alone.BeginPrompt(bg, tk.prompt, tk.settings, tk.seed); err != nil {
				t.Fatal(err)
			}
			frames, _, err := drama3.MakeFrames(alone, tk.frames, nil)
			if err != nil {
				t.Fatalf("round %d take %d alone: %v", round, i, err)
			}
			want[st.ID] = frames
			live[st.ID] = tk.frames
		}
		if round == 0 && set.Live() != len(takes) {
			t.Fatalf("%d takes live after the first round began, want %d", set.Live(), len(takes))
		}
		if sp := set.Splits(); round == 0 && hostLayers > 0 && (sp.Passes != 1 || sp.Shared != 1) {
			t.Fatalf("the first round under a host tier ran %d split passes with %d takes sharing a voice prefix, want 1 and 1", sp.Passes, sp.Shared)
		}
		if sp := set.Splits(); hostLayers == 0 && sp.Passes != 0 {
			t.Fatalf("%d split passes without a host tier", sp.Passes)
		}
		got := map[drama3.TakeID][][]int{}
		for step := 0; len(live) > 0; step++ {
			var frames []drama3.TakeFrame
			for tid := range live {
				frames = append(frames, drama3.TakeFrame{ID: tid, Codes: make([]int, len(entries))})
			}
			slices.SortFunc(frames, func(a, b drama3.TakeFrame) int { return int(a.ID) - int(b.ID) })
			if err := set.Step(frames); err != nil {
				t.Fatalf("round %d step %d: %v", round, step, err)
			}
			for _, fr := range frames {
				if fr.Err != nil {
					t.Fatalf("round %d step %d take %d: %v", round, step, fr.ID, fr.Err)
				}
				if !fr.End {
					got[fr.ID] = append(got[fr.ID], fr.Codes)
				}
				if fr.End || len(got[fr.ID]) == live[fr.ID] {
					set.End(fr.ID)
					delete(live, fr.ID)
				}
			}
			if step > 500 {
				t.Fatal("the takes did not end")
			}
		}
		for tid, w := range want {
			for k := range w {
				all++
				if k < len(got[tid]) && fmt.Sprint(got[tid][k]) == fmt.Sprint(w[k]) {
					same++
				} else if dev.Numerics.Exact() {
					var g []int
					if k < len(got[tid]) {
						g = got[tid][k]
					}
					t.Fatalf("round %d take %d frame %d: %v begun together, %v alone", round, tid, k, g, w[k])
				}
			}
			if dev.Numerics.Exact() && len(got[tid]) != len(w) {
				t.Fatalf("round %d take %d: %d frames begun together, %d alone", round, tid, len(got[tid]), len(w))
			}
		}
	}
	t.Logf("%s numerics: %d of %d frames the same begun together as alone", dev.Numerics, same, all)
}

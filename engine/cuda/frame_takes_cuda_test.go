//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"testing"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// Several takes in one step (TakeFrames: the B-row backbone step and tower)
// against each take made alone (Frames, one take at a time), on the
// make-tiny checkpoints: takes of different prompts (one in a reference
// voice, through the voice prefix cache), settings and seeds; two begin
// first and the others join after a few steps; a take sits a step out now
// and then; one stops early and a fifth take begins in its slot. Under
// exact numerics every take's codes must be those it makes alone; under
// fast (the B-row step's sums within tolerance of the one-row step's) the
// share of equal frames is logged.

func TestTakeFramesMatchAlone(t *testing.T) {
	eachTinyCheckpoint(t, testTakeFrames)
}

// setTake is one take of the comparison.
type setTake struct {
	prompt   drama3.Prompt
	settings sampling.Settings
	seed     uint64
	frames   int // at most
}

func testTakeFrames(t *testing.T, dir string) {
	const capacity, slots = 400, 4
	ck, alone, text, voice := takesFixture(t, dir, capacity)
	defer alone.Close()
	entries := alone.CodebookEntries()
	takes := []setTake{
		{text("The first take, sampled."), sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}, 11, 24},
		{text("The second, greedy and a little longer than the first."), sampling.Settings{TopP: 1}, 12, 18},
		{voice("A line in a cloned voice."), sampling.Settings{Temperature: 0.7, TopP: 0.8}, 13, 20},
		{text("A fourth that stops early."), sampling.Settings{Temperature: 1, TopP: 1}, 14, 6},
		{text("A fifth in the slot the fourth left."), sampling.Settings{Temperature: 0.9, TopP: 0.95, TopK: 50}, 15, 12},
	}
	want := make([][][]int, len(takes))
	for i, tk := range takes {
		if err := alone.BeginPrompt(context.Background(), tk.prompt, tk.settings, tk.seed); err != nil {
			t.Fatal(err)
		}
		frames, _, err := drama3.MakeFrames(alone, tk.frames, nil)
		if err != nil {
			t.Fatalf("take %d alone: %v", i, err)
		}
		want[i] = frames
	}

	f, err := LoadFrames(dev, ck, nil, FramesOptions{Capacity: capacity, Takes: slots, Batched: true, Pipeline: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewTakeFrames(f)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	if set.Capacity() != slots {
		t.Fatalf("a set of %d slots has capacity %d", slots, set.Capacity())
	}
	got := make([][][]int, len(takes))
	live := map[int]bool{}
	ended := map[int]bool{}
	begin := func(i int) {
		if err := set.Begin(context.Background(), drama3.TakeID(i), takes[i].prompt, takes[i].settings, takes[i].seed); err != nil {
			t.Fatalf("take %d: %v", i, err)
		}
		live[i] = true
	}
	begin(0)
	begin(1)
	for step := 0; len(live) > 0 || len(ended) < len(takes); step++ {
		if step == 3 {
			begin(2)
			begin(3)
		}
		if ended[3] && !live[4] && !ended[4] {
			begin(4) // into the slot take 3 left
		}
		var frames []drama3.TakeFrame
		for i := range takes {
			if !live[i] || (step%4 == 2 && i == step%len(takes) && len(live) > 1) { // sits this step out
				continue
			}
			frames = append(frames, drama3.TakeFrame{ID: drama3.TakeID(i), Codes: make([]int, len(entries))})
		}
		if len(frames) == 0 {
			if len(live) == 0 {
				break
			}
			continue
		}
		if err := set.Step(frames); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for _, fr := range frames {
			i := int(fr.ID)
			if fr.Err != nil {
				t.Fatalf("step %d take %d: %v", step, i, fr.Err)
			}
			if !fr.End {
				got[i] = append(got[i], fr.Codes)
			}
			if fr.End || len(got[i]) == takes[i].frames {
				set.End(fr.ID)
				delete(live, i)
				ended[i] = true
			}
		}
		if step > 500 {
			t.Fatal("the takes did not end")
		}
	}
	same, all := 0, 0
	for i := range takes {
		for k := range want[i] {
			all++
			if k < len(got[i]) && fmt.Sprint(got[i][k]) == fmt.Sprint(want[i][k]) {
				same++
			} else if dev.Numerics.Exact() {
				var g []int
				if k < len(got[i]) {
					g = got[i][k]
				}
				t.Fatalf("take %d frame %d: %v together, %v alone", i, k, g, want[i][k])
			}
		}
		if dev.Numerics.Exact() && len(got[i]) != len(want[i]) {
			t.Fatalf("take %d: %d frames together, %d alone", i, len(got[i]), len(want[i]))
		}
	}
	t.Logf("%s numerics: %d of %d frames the same together as alone", dev.Numerics, same, all)
}

// takesFixture is what the takes-together tests share: the checkpoint in dir,
// a one-take Frames of capacity rows to make each take alone, and prompt
// makers for a line in the default voice and in a reference voice (nine
// random reference frames, drawn once).
func takesFixture(t *testing.T, dir string, capacity int) (ck *drama3.Checkpoint, alone *Frames, text, voice func(string) drama3.Prompt) {
	t.Helper()
	ck, pb := engineWithPrompts(t, dir)
	alone, err := LoadFrames(dev, ck, nil, FramesOptions{Capacity: capacity}, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries := alone.CodebookEntries()
	r := newRand(t)
	codes := make([][]int, 9)
	for f := range codes {
		codes[f] = make([]int, len(entries))
		for c, e := range entries {
			codes[f][c] = r.IntN(e)
		}
	}
	text = func(s string) drama3.Prompt {
		ids, err := pb.DefaultVoice(s)
		if err != nil {
			t.Fatal(err)
		}
		return drama3.TextPrompt(ids)
	}
	voice = func(line string) drama3.Prompt {
		p, err := pb.ReferenceVoice(line, []drama3.Reference{{Transcript: "The reference, said once.", Codes: codes}}, entries)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	return ck, alone, text, voice
}

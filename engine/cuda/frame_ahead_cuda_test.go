//go:build cuda

package cuda

import (
	"context"
	"testing"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// TestFramesTwoAhead: two frames in flight (FramesOptions.Ahead2) make every
// take's codes bit for bit as one frame launched ahead does (the same
// graphs in the same order; only the host's reads and waits move), on the
// make-tiny checkpoints under the test's numerics: takes cut at their frame
// limit (sampled, greedy, hot), one that reaches the context limit (no
// frame is launched past it), a voice prompt, and a teacher-forced take
// (the second frame ahead is never launched for it). A take here may end by
// end of speech (the log says which), but on these checkpoints none did in
// session 11's run 3: the frame launched past an end (the end token's
// feedback row, then a step on it) is held by cmd/proscenium-gpu's
// TestCUDAEngineTiers/fast, whose take ends at frame 114 and which met an
// illegal address there before f611ce5.
func TestFramesTwoAhead(t *testing.T) {
	eachTinyCheckpoint(t, testFramesTwoAhead)
}

func testFramesTwoAhead(t *testing.T, dir string) {
	const capacity = 160
	ck, one, text, voice := takesFixture(t, dir, capacity)
	defer one.Close()
	one.SetPipeline(true)
	two, err := LoadFrames(dev, ck, nil, FramesOptions{Capacity: capacity, Pipeline: true, Ahead2: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	if !two.aheadOn() {
		t.Fatal("Ahead2 asked for, not on")
	}
	entries := one.CodebookEntries()
	hot := sampling.Settings{Temperature: 1.3, TopP: 1} // the widest draws
	takes := []struct {
		name     string
		prompt   drama3.Prompt
		settings sampling.Settings
		seed     uint64
		frames   int
	}{
		{"sampled", text("A take sampled with top-p and top-k."), sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}, 1, 40},
		{"greedy", text("A greedy take."), sampling.Settings{TopP: 1}, 2, 25},
		{"voice", voice("A line in a cloned voice."), sampling.Settings{Temperature: 0.8, TopP: 0.9}, 3, 30},
		{"hot 1", text("Hot."), hot, 4, 120},
		{"hot 2", text("Hot again."), hot, 5, 120},
		{"to the context limit", text("As long as the caches allow."), sampling.Settings{Temperature: 1, TopP: 0.95}, 6, capacity},
		{"one frame", text("One."), sampling.Settings{TopP: 1}, 7, 1},
	}
	ended := 0
	for _, tk := range takes {
		run := func(b *Frames) ([][]int, bool, error) {
			if err := b.BeginPrompt(context.Background(), tk.prompt, tk.settings, tk.seed); err != nil {
				t.Fatalf("%s: %v", tk.name, err)
			}
			return drama3.MakeFrames(b, tk.frames, nil)
		}
		want, wantEnd, wantErr := run(one)
		got, gotEnd, gotErr := run(two)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("%s: one ahead: %v; two ahead: %v", tk.name, wantErr, gotErr)
		}
		if f, k := firstCodeDifference(want, got, wantEnd, gotEnd); f >= 0 {
			t.Fatalf("%s: two frames ahead differ from one at frame %d codebook %d (%d frames, end %v, against %d, end %v)",
				tk.name, f, k, len(got), gotEnd, len(want), wantEnd)
		}
		if gotEnd {
			ended++
		}
		t.Logf("%s: %d frames, end of speech %v, error %v: the same codes", tk.name, len(got), gotEnd, gotErr)
	}
	if ended == 0 {
		t.Log("no take ended by end of speech on this checkpoint")
	}

	// A teacher-forced take runs one frame at a time (nothing launched
	// ahead), then a free take after it is two ahead again.
	forced := make([][]int, 6)
	for f := range forced {
		forced[f] = make([]int, len(entries))
		for c, e := range entries {
			forced[f][c] = (f*7 + c*3) % e
		}
	}
	for _, b := range []*Frames{one, two} {
		b.SetPipeline(false)
		if err := b.BeginPrompt(context.Background(), takes[0].prompt, takes[0].settings, 9); err != nil {
			t.Fatal(err)
		}
		got, _, err := drama3.MakeFrames(b, len(forced), forced)
		if err != nil {
			t.Fatalf("teacher-forced: %v", err)
		}
		for f := range got {
			for k := range got[f] {
				if got[f][k] != forced[f][k] {
					t.Fatalf("teacher-forced frame %d codebook %d: made %d, forced %d", f, k, got[f][k], forced[f][k])
				}
			}
		}
		b.SetPipeline(true)
	}
	tk := takes[0]
	var frames [2][][]int
	for i, b := range []*Frames{one, two} {
		if err := b.BeginPrompt(context.Background(), tk.prompt, tk.settings, tk.seed); err != nil {
			t.Fatal(err)
		}
		var err error
		if frames[i], _, err = drama3.MakeFrames(b, tk.frames, nil); err != nil {
			t.Fatal(err)
		}
	}
	if f, k := firstCodeDifference(frames[0], frames[1], false, false); f >= 0 {
		t.Fatalf("after a teacher-forced take: two ahead differ from one at frame %d codebook %d", f, k)
	}
}

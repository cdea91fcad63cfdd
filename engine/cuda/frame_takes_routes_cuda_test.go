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

// TestTakeFramesRoutes holds the routing log (KeepRoutes, TapRoutes) to
// what the backbone routed: every prompt row of every take (its prefill,
// joint or alone) and every step logs each layer's k distinct experts, and
// they are the top k of the router logits logged beside them (the ids and
// the logits of one layer and row, not another's); a take's routing in a
// joint prefill pass and in a three-take step is its routing alone, to the
// bit under exact (each row's log is its own take's). A backbone whose step
// graph exists refuses to start a log that graph would not fill.
func TestTakeFramesRoutes(t *testing.T) {
	eachTinyCheckpoint(t, testTakeFramesRoutes)
}

func testTakeFramesRoutes(t *testing.T, dir string) {
	const capacity, slots, frames = 200, 3, 8
	ck, alone, text, _ := takesFixture(t, dir, capacity)
	defer alone.Close()
	if err := alone.BeginPrompt(context.Background(), text("A step first."), sampling.Settings{TopP: 1}, 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := drama3.MakeFrames(alone, 2, nil); err != nil {
		t.Fatal(err)
	}
	if err := alone.bb.KeepRoutes(); err == nil {
		t.Fatal("a backbone with a captured step started a routing log")
	}

	f, err := LoadFrames(dev, ck, nil, FramesOptions{Capacity: capacity, Takes: slots, Batched: true, KeepRoutes: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	set, err := NewTakeFrames(f)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	p := f.bb.Plan
	layers := len(f.bb.layers)
	logged := map[drama3.TakeID]map[int][]StepRoute{}  // by frame
	prompts := map[drama3.TakeID]map[int][]StepRoute{} // by prompt row
	if err := set.TapRoutes(func(id drama3.TakeID, prompt bool, at int, r []StepRoute) {
		m := logged
		if prompt {
			m = prompts
		}
		if m[id] == nil {
			m[id] = map[int][]StepRoute{}
		}
		if _, ok := m[id][at]; ok {
			t.Errorf("take %d: row %d (prompt %v) logged twice", id, at, prompt)
		}
		m[id][at] = r
	}); err != nil {
		t.Fatal(err)
	}
	lines := []string{"The first take of three.", "A second, a little longer than the first.", "And a third."}
	settings := sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30}
	// run makes frames of takes ids (lines[i], seed 20+i for take i mod 10)
	// together, begun together (one joint prefill), each to its end or
	// frames.
	run := func(ids []drama3.TakeID) map[drama3.TakeID]int {
		made := map[drama3.TakeID]int{}
		var starts []drama3.TakeStart
		for _, id := range ids {
			i := int(id) % 10
			starts = append(starts, drama3.TakeStart{Ctx: context.Background(), ID: id, Prompt: text(lines[i]), Settings: settings, Seed: uint64(20 + i)})
		}
		for i, err := range set.BeginMany(starts) {
			if err != nil {
				t.Fatalf("take %d: %v", starts[i].ID, err)
			}
		}
		live := slices.Clone(ids)
		for len(live) > 0 {
			var step []drama3.TakeFrame
			for _, id := range live {
				step = append(step, drama3.TakeFrame{ID: id, Codes: make([]int, len(f.CodebookEntries()))})
			}
			if err := set.Step(step); err != nil {
				t.Fatal(err)
			}
			live = live[:0]
			for _, fr := range step {
				if fr.Err != nil {
					t.Fatalf("take %d: %v", fr.ID, fr.Err)
				}
				made[fr.ID]++
				if fr.End || made[fr.ID] == frames {
					set.End(fr.ID)
				} else {
					live = append(live, fr.ID)
				}
			}
		}
		return made
	}
	together := run([]drama3.TakeID{0, 1, 2})
	for i := range slots {
		run([]drama3.TakeID{drama3.TakeID(10 + i)})
	}

	for id, made := range together {
		rows := len(text(lines[id]))
		for _, tk := range []drama3.TakeID{id, id + 10} { // together, alone
			for row := range rows {
				r := prompts[tk][row]
				if len(r) != layers {
					t.Fatalf("take %d prompt row %d: %d layers logged of %d", tk, row, len(r), layers)
				}
				for L, lr := range r {
					checkTopK(t, tk, fmt.Sprintf("prompt row %d", row), L, lr, p.K, p.E)
				}
			}
			if len(prompts[tk]) != rows {
				t.Fatalf("take %d: %d prompt rows logged of %d", tk, len(prompts[tk]), rows)
			}
			for fr := 1; fr < made; fr++ { // frame 0 comes from the prefill (its prompt rows)
				r := logged[tk][fr]
				if len(r) != layers {
					t.Fatalf("take %d frame %d: %d layers logged of %d", tk, fr, len(r), layers)
				}
				for L, lr := range r {
					checkTopK(t, tk, fmt.Sprintf("frame %d", fr), L, lr, p.K, p.E)
				}
			}
		}
		for _, c := range []struct {
			what string
			m    map[drama3.TakeID]map[int][]StepRoute
		}{{"prompt row", prompts}, {"frame", logged}} {
			same, sameExperts, all := 0, 0, 0
			for at, b := range c.m[id] {
				a, ok := c.m[id+10][at]
				if !ok {
					continue
				}
				for L := range b {
					all++
					if sameSet(a[L].Experts, b[L].Experts) {
						sameExperts++
					}
					if slices.Equal(a[L].Experts, b[L].Experts) && slices.Equal(a[L].Logits, b[L].Logits) {
						same++
					} else if dev.Numerics.Exact() {
						t.Fatalf("take %d %s %d layer %d: routed %v (logits %v) together, %v (%v) alone", id, c.what, at, L, b[L].Experts, b[L].Logits, a[L].Experts, a[L].Logits)
					}
				}
			}
			if all == 0 {
				t.Fatalf("take %d: no %s's routing logged both together and alone", id, c.what)
			}
			t.Logf("%s numerics: take %d: %d of %d layers' routing of a %s the same together as alone, to the bit; the same experts in %d", dev.Numerics, id, same, all, c.what, sameExperts)
		}
	}
}

// checkTopK holds one layer's logged routing to its logits: k distinct
// experts in range, none of whose logits lies below an unchosen one's (by
// more than float32's rounding of the router's softmax). where names the
// row (a frame, a prompt row).
func checkTopK(t *testing.T, id drama3.TakeID, where string, layer int, r StepRoute, k, E int) {
	t.Helper()
	if len(r.Experts) != k || len(r.Logits) != E {
		t.Fatalf("take %d %s layer %d: %d experts of %d logits (want %d of %d)", id, where, layer, len(r.Experts), len(r.Logits), k, E)
	}
	chosen := map[int32]bool{}
	low := float32(0)
	for i, e := range r.Experts {
		if e < 0 || int(e) >= E || chosen[e] {
			t.Fatalf("take %d %s layer %d: experts %v", id, where, layer, r.Experts)
		}
		chosen[e] = true
		if i == 0 || r.Logits[e] < low {
			low = r.Logits[e]
		}
	}
	for e, l := range r.Logits {
		if !chosen[int32(e)] && l > low+1e-6*max(1, abs32(l)) {
			t.Fatalf("take %d %s layer %d: expert %d (logit %g) left out for one of %v at %g", id, where, layer, e, l, r.Experts, low)
		}
	}
}

func abs32(x float32) float32 {
	if x < 0 {
		return -x
	}
	return x
}

// sameSet reports whether a and b hold the same experts, in any order.
func sameSet(a, b []int32) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

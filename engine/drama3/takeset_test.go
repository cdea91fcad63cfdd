package drama3

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"proscenium/engine/sampling"
)

// PrefillMany over a set without a joint prefill (Interleave: BeginEach):
// each take begins as Prefill begins it alone; a take whose caller stopped
// it ends as a cancel and one the set refuses (its id already live) fails,
// each alone; the others' codes are those Generate makes. (Broken once by
// handing every take the first take's outcome: the refused take then
// counted as live.)
func TestPrefillManyBeginsEachAsAlone(t *testing.T) {
	newBackend := func() (FrameBackend, error) { return NewStepFrames(newFake(-1), nil) }
	first, _ := newBackend()
	set, err := NewInterleave(first, newBackend, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	take := func(seed uint64) Take {
		return Take{Prompt: []int{1, 2, 3}, Sampling: sampling.Settings{Temperature: 1, TopP: 1}, Seed: seed, MaxFrames: 6}
	}
	stopped, stop := context.WithCancel(context.Background())
	stop()
	bg := context.Background()
	ids := []TakeID{1, 2, 3, 1} // the last reuses take 1's id
	ctxs := []context.Context{bg, stopped, bg, bg}
	runs := make([]*TakeRun, len(ids))
	for i, id := range ids {
		if runs[i], err = NewTakeRun(set, id, take(uint64(10+i)), Listener{}); err != nil {
			t.Fatal(err)
		}
	}
	live, errs := PrefillMany(set, runs, ctxs)
	if want := []bool{true, false, true, false}; !reflect.DeepEqual(live, want) {
		t.Fatalf("live %v, want %v (errors %v)", live, want, errs)
	}
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || errs[3] == nil || !strings.Contains(errs[3].Error(), "already live") {
		t.Fatalf("errors %v: want only the fourth take's (its id is live)", errs)
	}
	if res, err := runs[1].Finish(); err != nil || res.Reason != FinishCancel {
		t.Fatalf("the stopped take: %+v, %v; want a cancel", res, err)
	}
	for _, i := range []int{0, 2} {
		r := runs[i]
		for r.Due(bg) {
			step := []TakeFrame{r.NextFrame()}
			if err := set.Step(step); err != nil {
				t.Fatal(err)
			}
			if ok, err := r.Took(step[0], time.Millisecond, 1); err != nil {
				t.Fatal(err)
			} else if !ok {
				break
			}
		}
		got, err := r.Finish()
		if err != nil {
			t.Fatal(err)
		}
		set.End(r.ID())
		b, _ := newBackend()
		want, err := Generate(bg, b, take(uint64(10+i)), Listener{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Codes, want.Codes) {
			t.Errorf("take %d: %v begun with others, %v alone", i, got.Codes, want.Codes)
		}
	}
	if errs := BeginEach(set, nil); len(errs) != 0 {
		t.Errorf("BeginEach of no takes: %v", errs)
	}
}

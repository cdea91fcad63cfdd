package main

import (
	"strings"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// TestCompareTakes holds -near-ties' finding to what each case of a take
// alone and in a batch must give: the same codes; codes that part where the
// two codes' logits are within the runs' difference (a near-tie, the
// verdict passes); codes that part far from any tie (the verdict fails);
// and one run ending where the other goes on.
func TestCompareTakes(t *testing.T) {
	vec := func(vals map[int]float32, n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = -8
		}
		for i, x := range vals {
			v[i] = x
		}
		return v
	}
	codes := [][]int{{1, 2}, {3, 4}}
	logs := func(f1c1 []float32) drama3.LogitsLog {
		l := drama3.LogitsLog{}
		for f := range 2 {
			for c := range 2 {
				l.Tap(f, c, vec(map[int]float32{codes[f][c]: 2}, 9))
			}
		}
		if f1c1 != nil {
			l.Tap(1, 1, f1c1)
		}
		return l
	}
	cmp := func(i int, seed uint64, a, b [][]int, aEnd, bEnd bool, al, bl drama3.LogitsLog) nearTieTake {
		return compareTakes(4, i, seed, takeRun{codes: a, ended: aEnd, logits: al}, takeRun{codes: b, ended: bEnd, logits: bl})
	}
	t.Run("identical", func(t *testing.T) {
		r := cmp(0, 3, codes, codes, false, false, logs(nil), logs(nil))
		if !r.Identical || r.Frames != 2 || r.WorstBefore != 0 || r.FirstOff != -1 || r.Class != takeIdentical {
			t.Fatalf("%+v", r)
		}
		if err := nearTiesVerdict([]nearTieTake{r}, true); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("identical codes, logits apart", func(t *testing.T) {
		// Frame 1's last vector 1e-3 apart (relative), the codes the same:
		// fine under fast, where it is named; under exact a failure.
		moved := vec(map[int]float32{4: 2 + 8e-3}, 9)
		r := cmp(0, 3, codes, codes, false, false, logs(nil), logs(moved))
		if !r.Identical || r.FirstOff != 1 || r.Class != takeIdentical || r.WorstBefore < 9e-4 {
			t.Fatalf("%+v", r)
		}
		if err := nearTiesVerdict([]nearTieTake{r}, false); err != nil {
			t.Fatal(err)
		}
		if nearTiesVerdict([]nearTieTake{r}, true) == nil {
			t.Fatal("under exact a take whose logits moved passed")
		}
	})
	t.Run("near-tie", func(t *testing.T) {
		// Codes 4 and 5 of frame 1's second draw within the runs' logits
		// difference of each other: either may be drawn.
		alone := vec(map[int]float32{4: 2, 5: 2 - 1e-6}, 9)
		batched := vec(map[int]float32{4: 2 - 2e-6, 5: 2}, 9)
		other := [][]int{{1, 2}, {3, 5}}
		r := cmp(1, 4, codes, other, false, false, logs(alone), logs(batched))
		if r.Identical || r.Frame != 1 || r.Codebook != 1 || r.AloneCode != 4 || r.BatchedCode != 5 || !r.NearTie || r.FirstOff != -1 || r.Class != cpu.DrawNearTie {
			t.Fatalf("%+v", r)
		}
		if err := nearTiesVerdict([]nearTieTake{r}, false); err != nil {
			t.Fatal(err)
		}
		if nearTiesVerdict([]nearTieTake{r}, true) == nil {
			t.Fatal("under exact a take that parts from itself alone passed")
		}
	})
	t.Run("near-tie after the logits left the tolerance", func(t *testing.T) {
		// The same parting, but frame 0's first vector was 1e-3 apart
		// before it: something upstream of the draws moved the logits.
		alone := vec(map[int]float32{4: 2, 5: 2 - 1e-6}, 9)
		batched := vec(map[int]float32{4: 2 - 2e-6, 5: 2}, 9)
		bl := logs(batched)
		bl.Tap(0, 0, vec(map[int]float32{1: 2 + 8e-3}, 9))
		r := cmp(1, 4, codes, [][]int{{1, 2}, {3, 5}}, false, false, logs(alone), bl)
		if !r.NearTie || r.FirstOff != 0 || r.Class != takeOffTolerance {
			t.Fatalf("%+v", r)
		}
		if err := nearTiesVerdict([]nearTieTake{r}, false); err != nil {
			t.Fatal(err)
		}
		if got := nearTiesTally([]nearTieTake{r}); !strings.Contains(got, "1 parted with logits off the tolerance") {
			t.Fatal(got)
		}
	})
	t.Run("far from a tie", func(t *testing.T) {
		// The same logits to their bits, yet another code: no near-tie.
		v := vec(map[int]float32{4: 6}, 9)
		other := [][]int{{1, 2}, {3, 0}}
		r := cmp(2, 5, codes, other, false, false, logs(v), logs(v))
		if r.NearTie || r.LogitsRel != 0 || r.Class != cpu.Unexplained {
			t.Fatalf("%+v", r)
		}
		if nearTiesVerdict([]nearTieTake{r}, false) == nil {
			t.Fatal("a take that parted far from any tie passed")
		}
	})
	t.Run("one ends", func(t *testing.T) {
		r := cmp(3, 6, codes, codes[:1], false, true, logs(nil), logs(nil))
		if r.Identical || r.Frame != 1 || r.Codebook != -1 || r.Frames != 1 {
			t.Fatalf("%+v", r)
		}
	})
}

// TestFirstDivergence: the first code in which two takes differ, or where
// one ended and the other did not.
func TestFirstDivergence(t *testing.T) {
	a := [][]int{{1, 2, 3}, {4, 5, 6}}
	for _, tc := range []struct {
		name       string
		b          [][]int
		aEnd, bEnd bool
		want       *divergence
	}{
		{"same", [][]int{{1, 2, 3}, {4, 5, 6}}, true, true, nil},
		{"a residual code", [][]int{{1, 2, 3}, {4, 5, 7}}, false, false, &divergence{Frame: 1, Codebook: 2, CPUCode: 6, GPUCode: 7}},
		{"the semantic code first", [][]int{{9, 2, 3}, {4, 0, 6}}, false, false, &divergence{Frame: 0, Codebook: 0, CPUCode: 1, GPUCode: 9}},
		{"b ended sooner", [][]int{{1, 2, 3}}, false, true, &divergence{Frame: 1, Codebook: -1, CPUCode: 2, GPUCode: 1}},
		{"as long, one ended", [][]int{{1, 2, 3}, {4, 5, 6}}, true, false, &divergence{Frame: 2, Codebook: -1, CPUCode: 2, GPUCode: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := firstDivergence(a, tc.b, tc.aEnd, tc.bEnd)
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

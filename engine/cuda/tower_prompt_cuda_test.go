//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// TestTowerPromptRows runs a prompt of text rows and rows forced to
// reference frames through the batched pass (Tower.PromptRows) and checks
// it against the two references it replaces: engine/cpu's Tower (text rows
// by Text, each forced row by Shared and Residual with its codes) and the
// device tower's own one-row path (Prefill for text runs, Frame with the
// codes forced for each forced row). After the prompt both device towers
// and the CPU make the same forced frames, whose logits must agree within
// 1e-4 of the CPU's; every layer's cached keys and values of the prompt
// must agree between the two device paths within 1e-5.
func TestTowerPromptRows(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  *drama3.Config
	}{{"demo", drama3.TinyConfig()}, {"odd", drama3.TinyOddConfig()}} {
		t.Run(c.name, func(t *testing.T) { eachNumerics(t, func(t *testing.T) { testTowerPromptRows(t, c.cfg) }) })
	}
}

func testTowerPromptRows(t *testing.T, cfg *drama3.Config) {
	const (
		rows  = 40 // prompt rows: text 0…6, forced 7…30, text 31…35, forced 36…39
		after = 6  // forced frames after the prompt
		tol   = 1e-4
	)
	r := newRand(t)
	f := newTowerFixture(t, r, cfg)
	g := f.g
	D, ncb := g.Dim, len(g.Entries)
	ref, err := cpu.NewTower(&f.audio, f.cpuW)
	if err != nil {
		t.Fatal(err)
	}
	randomCodes := func() []int {
		c := make([]int, ncb)
		for i := range c {
			c[i] = r.IntN(g.Entries[i])
		}
		return c
	}
	forcedRow := func(i int) bool { return (i >= 7 && i <= 30) || i >= 36 }
	hidden := randNonZero(r, rows*D)
	codes := make([][]int, rows)
	words := make([]int32, rows*ncb)
	for i := range codes {
		if !forcedRow(i) {
			words[i*ncb] = -1
			continue
		}
		codes[i] = randomCodes()
		for c, v := range codes[i] {
			words[i*ncb+c] = int32(v)
		}
	}
	hb, cb := upload(t, hidden), upload(t, words)

	// The CPU reference.
	for i := 0; i < rows; {
		if codes[i] == nil {
			e := i
			for e < rows && codes[e] == nil {
				e++
			}
			if err := ref.Text(hidden[i*D:e*D], e-i); err != nil {
				t.Fatal(err)
			}
			i = e
			continue
		}
		if err := ref.Shared(hidden[i*D:(i+1)*D], codes[i][0]); err != nil {
			t.Fatal(err)
		}
		for j := 1; j < ncb; j++ {
			if err := ref.Residual(j, codes[i][j-1], make([]float32, g.Entries[j])); err != nil {
				t.Fatal(err)
			}
		}
		i++
	}

	opt := TowerOptions{MaxRows: rows + after + 1, PrefillChunk: 7} // a ragged last chunk
	settings := sampling.Settings{TopP: 1}
	batched, err := NewTower(dev, &f.dev, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer batched.Close()
	oneByOne, err := NewTower(dev, &f.dev, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer oneByOne.Close()
	for _, tw := range []*Tower{batched, oneByOne} {
		if err := tw.Begin(settings, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := dev.Run(func(q *Queue) error { return batched.PromptRows(q, Whole(hb), rows, Whole(cb), ncb) }); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < rows; {
		if codes[i] == nil {
			e := i
			for e < rows && codes[e] == nil {
				e++
			}
			if err := dev.Run(func(q *Queue) error { return oneByOne.Prefill(q, Whole(hb).At(int64(i*D*4)), e-i) }); err != nil {
				t.Fatal(err)
			}
			i = e
			continue
		}
		if err := oneByOne.Force(codes[i]); err != nil {
			t.Fatal(err)
		}
		if err := dev.Run(func(q *Queue) error { return oneByOne.Frame(q, Whole(hb).At(int64(i*D*4))) }); err != nil {
			t.Fatal(err)
		}
		i++
	}
	// Neither path flagged an error.
	for _, tw := range []*Tower{batched, oneByOne} {
		res, err := tw.Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Err(); err != nil {
			t.Fatal(err)
		}
	}
	kvFloats := opt.MaxRows * g.KVHeads * g.HeadDim
	bk, ok := download(t, batched.kv, 2*batched.layers()*kvFloats), download(t, oneByOne.kv, 2*oneByOne.layers()*kvFloats)
	used := rows * g.KVHeads * g.HeadDim
	worstKV := 0.0
	for l := 0; l < 2*batched.layers(); l++ {
		got, want := bk[l*kvFloats:l*kvFloats+used], ok[l*kvFloats:l*kvFloats+used]
		rel := finiteRelErr(t, fmt.Sprintf("layer %d %s cache", l/2, []string{"key", "value"}[l%2]), got, want)
		worstKV = max(worstKV, rel)
		if !(rel <= 1e-5) {
			t.Fatalf("layer %d %s cache: batched prompt rows %.3g from the one-row path", l/2, []string{"key", "value"}[l%2], rel)
		}
	}

	// Forced frames after the prompt on all three: the logits see the caches.
	hrow := alloc(t, D*4)
	worst := 0.0
	for fi := 0; fi < after; fi++ {
		h := randNonZero(r, D)
		c := randomCodes()
		if err := ref.Shared(h, c[0]); err != nil {
			t.Fatal(err)
		}
		want := make([][]float32, ncb)
		for j := 1; j < ncb; j++ {
			want[j] = make([]float32, g.Entries[j])
			if err := ref.Residual(j, c[j-1], want[j]); err != nil {
				t.Fatal(err)
			}
		}
		for _, tw := range []*Tower{batched, oneByOne} {
			if err := firstErr(Upload(dev, hrow, 0, h), tw.Force(c)); err != nil {
				t.Fatal(err)
			}
			if err := dev.Run(func(q *Queue) error { return tw.Frame(q, Whole(hrow)) }); err != nil {
				t.Fatal(err)
			}
			for j := 1; j < ncb; j++ {
				got := download(t, tw.ResidualLogits(j), g.Entries[j])
				rel := finiteRelErr(t, fmt.Sprintf("frame %d codebook %d", fi, j), got, want[j])
				worst = max(worst, rel)
				if !(rel <= tol) {
					t.Fatalf("frame %d after the prompt, codebook %d: logits %.3g from the CPU's (batched %v)", fi, j, rel, tw == batched)
				}
			}
		}
	}
	t.Logf("%d prompt rows (%d forced): caches within %.3g of the one-row path; %d forced frames after: logits within %.3g of the CPU",
		rows, rows-12, worstKV, after, worst)
}

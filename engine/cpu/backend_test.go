package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// codesCodec is a FrameDecoder for tests: frame i becomes 3 samples made
// from its codes, so a take's audio is a function of its codes.
type codesCodec struct{}

func (codesCodec) Decode(frames [][]int, from, to int) ([]float32, error) {
	if from < 0 || to > len(frames) || from >= to {
		return nil, fmt.Errorf("bad range [%d, %d) of %d", from, to, len(frames))
	}
	var pcm []float32
	for _, f := range frames[from:to] {
		pcm = append(pcm, float32(f[0]), float32(f[1]), float32(f[len(f)-1]))
	}
	return pcm, nil
}

type testModel struct {
	bw    *testBackbone
	tw    *testTower
	heads *drama3.Heads
}

func newTestModel(t *testing.T) *testModel {
	t.Helper()
	bg := geometryLike()
	tg := drama3.AudioConfig{Dim: bg.HiddenSize, NumHeads: 4, NumKVHeads: 2, HeadDim: 32, IntermediateSize: 48, NormEps: 1e-6,
		RotaryPercent: 0.5, RopeBase: 1e7, SharedLayers: 4, NumCodebooks: 4, SemanticCodebookSize: 20, CodebookSize: 9}
	m := &testModel{bw: randomBackbone(bg, 21), tw: randomTower(tg, 22)}
	r := rand.New(rand.NewPCG(4, 4))
	sem := make([]float32, 21*bg.HiddenSize)
	for i := range sem {
		sem[i] = float32(r.NormFloat64() / 4)
	}
	var ids []int
	for c := 0; c < 20; c++ {
		ids = append(ids, 50+c)
	}
	m.heads = &drama3.Heads{Dim: bg.HiddenSize, Semantic: sem, SemanticTokens: ids}
	return m
}

// frames is b as the loop drives it.
func frames(t *testing.T, b *Backend) *drama3.StepFrames {
	t.Helper()
	f, err := drama3.NewStepFrames(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (m *testModel) backend(t *testing.T) *Backend {
	t.Helper()
	bb, err := newTestBackbone(m.bw)
	if err != nil {
		t.Fatal(err)
	}
	tw, err := newTestTower(m.tw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBackend(bb, tw, m.heads, codesCodec{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A take through the loop reads, at every draw, the logits a from-scratch
// evaluation of the whole sequence gives: the backbone over prompt and
// feedback rows at once, the tower reference in float64 over text rows and
// audio rows with the sampled codes. This pins the wiring: which row's hidden
// state feeds the semantic head and the tower, the positions, the feedback.
func TestBackendTakeMatchesWholeSequence(t *testing.T) {
	m := newTestModel(t)
	b := m.backend(t)
	prompt := []int{3, 14, 15, 92, 65, 35}
	type draw struct {
		frame, cb int
		logits    []float32
	}
	var draws []draw
	take := drama3.Take{Prompt: prompt, Sampling: sampling.Settings{Temperature: 1, TopP: 1}, Seed: 11, MaxFrames: 6}
	res, err := drama3.Generate(context.Background(), frames(t, b), take, drama3.Listener{
		Logits: func(frame, cb int, l []float32) { draws = append(draws, draw{frame, cb, append([]float32(nil), l...)}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Codes) < 2 {
		t.Fatalf("only %d frames (%s): pick another seed", len(res.Codes), res.Reason)
	}

	// The whole sequence: prompt rows, then one feedback row per frame.
	D := m.bw.Geometry.HiddenSize
	rows := TokenRows(prompt)
	for _, codes := range res.Codes {
		row := make([]float32, D)
		if err := m.heads.FeedbackRow(row, codes, m.bw.Embed, m.tw.Embeddings); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, BackboneRow{Embedding: row})
	}
	whole, err := newTestBackbone(m.bw)
	if err != nil {
		t.Fatal(err)
	}
	hidden, err := whole.Run(rows)
	if err != nil {
		t.Fatal(err)
	}
	P := len(prompt)
	var trows []towerRow
	for r := 0; r < P-1+len(res.Codes); r++ {
		tr := towerRow{hidden: f64(hidden[r*D : (r+1)*D])}
		if r >= P-1 {
			tr.codes = res.Codes[r-(P-1)]
		}
		trows = append(trows, tr)
	}
	towerWant := referenceTower(m.tw, trows)

	for _, d := range draws {
		var want []float64
		if d.cb == 0 {
			h := f64(hidden[(P-1+d.frame)*D : (P+d.frame)*D])
			for c := 0; c <= m.heads.Codes(); c++ {
				var s float64
				for i := 0; i < D; i++ {
					s += float64(m.heads.Semantic[c*D+i]) * h[i]
				}
				want = append(want, s)
			}
		} else {
			want = towerWant[P-1+d.frame][d.cb-1]
		}
		if e := relErr(d.logits, want); !(e <= 1e-4) {
			t.Errorf("frame %d codebook %d: logits differ from the whole-sequence evaluation by %.2e", d.frame, d.cb, e)
		}
	}
	wantDraws := len(res.Codes)*4 + map[string]int{drama3.FinishStop: 1, drama3.FinishLength: 0}[res.Reason]
	if len(draws) != wantDraws {
		t.Errorf("%d draws for %d frames ending %s", len(draws), len(res.Codes), res.Reason)
	}
}

// Two takes with the same request on one backend give the same codes and
// audio (Begin clears every cache); another seed gives other codes.
func TestBackendTakesAreReproducible(t *testing.T) {
	m := newTestModel(t)
	b := m.backend(t)
	run := func(seed uint64) ([][]int, []float32) {
		var pcm []float32
		take := drama3.Take{Prompt: []int{1, 2, 3, 4}, Sampling: sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 5}, Seed: seed, MaxFrames: 8}
		res, err := drama3.Generate(context.Background(), frames(t, b), take, drama3.Listener{Audio: func(from, to int, p []float32) { pcm = append(pcm, p...) }})
		if err != nil {
			t.Fatal(err)
		}
		return res.Codes, pcm
	}
	c1, p1 := run(5)
	c2, p2 := run(5)
	if !reflect.DeepEqual(c1, c2) || !reflect.DeepEqual(p1, p2) {
		t.Fatal("the same seed gave a different take")
	}
	c3, _ := run(6)
	if reflect.DeepEqual(c1, c3) {
		t.Fatal("another seed gave the same codes")
	}
	for _, f := range c1 {
		for cb, c := range f {
			if c < 0 || c >= m.tw.Geometry.CodebookEntries(cb) {
				t.Fatalf("code %d outside codebook %d", c, cb)
			}
		}
	}
	_ = math.Pi
}

// A prompt longer than PrefillChunk runs in chunks: the semantic logits and
// every later frame equal those of one whole prefill (backbone over all rows
// at once, tower over all text rows at once), bit for bit.
func TestBackendChunkedPrefillMatchesWhole(t *testing.T) {
	m := newTestModel(t)
	r := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{PrefillChunk + 1, PrefillChunk + 2, 2*PrefillChunk + 37} {
		prompt := randomIDs(r, n, m.bw.Geometry.VocabSize)
		b := m.backend(t)
		got := make([]float32, 21)
		if err := b.Begin(context.Background(), prompt, got); err != nil {
			t.Fatal(err)
		}
		whole := m.backend(t)
		hidden, err := whole.backbone.Run(TokenRows(prompt))
		if err != nil {
			t.Fatal(err)
		}
		D := m.bw.Geometry.HiddenSize
		if err := whole.tower.Text(hidden[:(n-1)*D], n-1); err != nil {
			t.Fatal(err)
		}
		whole.hidden = hidden[(n-1)*D:]
		want := make([]float32, 21)
		whole.semanticLogits(want)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%d rows: chunked prefill logits differ from the whole prefill's", n)
		}
		// The tower caches agree too: the next audio row gives the same logits.
		for _, x := range []*Backend{b, whole} {
			if err := x.TowerShared(3); err != nil {
				t.Fatal(err)
			}
		}
		lb, lw := make([]float32, 9), make([]float32, 9)
		if err := b.TowerResidual(1, 3, lb); err != nil {
			t.Fatal(err)
		}
		if err := whole.TowerResidual(1, 3, lw); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(lb, lw) {
			t.Fatalf("%d rows: tower after a chunked prefill differs", n)
		}
	}
}

// countdownCtx is a context whose Err turns to Canceled at its n-th call.
type countdownCtx struct {
	context.Context
	calls, n int
}

func (c *countdownCtx) Err() error {
	c.calls++
	if c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

// A stop during the prefill of a long prompt takes effect at the next chunk:
// Begin returns the context's error with only the chunks before it run.
func TestBackendPrefillStopsBetweenChunks(t *testing.T) {
	m := newTestModel(t)
	b := m.backend(t)
	prompt := randomIDs(rand.New(rand.NewPCG(9, 9)), 3*PrefillChunk, m.bw.Geometry.VocabSize)
	ctx := &countdownCtx{Context: context.Background(), n: 2}
	err := b.Begin(ctx, prompt, make([]float32, 21))
	if err != context.Canceled {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if b.backbone.Len() != PrefillChunk || b.tower.Len() != PrefillChunk {
		t.Fatalf("backbone %d rows, tower %d rows; want one chunk of %d", b.backbone.Len(), b.tower.Len(), PrefillChunk)
	}
	// The backend is usable afterwards: a new Begin starts from scratch.
	if err := b.Begin(context.Background(), prompt[:5], make([]float32, 21)); err != nil || b.backbone.Len() != 5 {
		t.Fatalf("Begin after a stop: %v, %d rows", err, b.backbone.Len())
	}
}

func TestPrefillChunks(t *testing.T) {
	for _, c := range []struct {
		n    int
		want [][2]int
	}{
		{1, [][2]int{{0, 1}}},
		{PrefillChunk, [][2]int{{0, PrefillChunk}}},
		{PrefillChunk + 1, [][2]int{{0, PrefillChunk + 1}}},
		{PrefillChunk + 2, [][2]int{{0, PrefillChunk}, {PrefillChunk, PrefillChunk + 2}}},
	} {
		if got := prefillChunks(c.n); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%d rows: chunks %v, want %v", c.n, got, c.want)
		}
	}
}

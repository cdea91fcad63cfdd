//go:build cuda

package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// The device tower against engine/cpu's Tower and AudioHeads on random
// weights (BF16-rounded, so both sides multiply the same numbers): 60
// teacher-forced frames after a prompt, every semantic and codebook logits
// vector and feedback row within 1e-4 relative; then frames drawn on the
// device, whose codes must be the CPU sampler's on the device's logits.

// testArena lays tensors out in one device block at 256-byte offsets, as
// the model's arena does.
type testArena struct {
	data []byte
	ts   []*Tensor
}

func (a *testArena) put(b []byte) Tensor {
	off := (len(a.data) + 255) &^ 255
	a.data = append(a.data, make([]byte, off-len(a.data))...)
	a.data = append(a.data, b...)
	return Tensor{Off: int64(off)}
}

func (a *testArena) bf16(dst *Tensor, v []float32) {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], checkpoint.F32ToBF16(x))
	}
	*dst = a.put(b)
	a.ts = append(a.ts, dst)
}

func (a *testArena) f32(dst *Tensor, v []float32) {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	*dst = a.put(b)
	a.ts = append(a.ts, dst)
}

// upload places the arena on the device and points every tensor at it.
func (a *testArena) upload(t *testing.T) {
	blk := upload(t, a.data)
	for _, d := range a.ts {
		d.Block = blk
	}
}

// roundBF16 is a random matrix of rows×cols scaled by 1/sqrt(cols), rounded to BF16.
func roundBF16(r *rand.Rand, rows, cols int) []float32 {
	v := randNonZero(r, rows*cols)
	s := float32(1 / math.Sqrt(float64(cols)))
	for i := range v {
		v[i] = checkpoint.BF16ToF32(checkpoint.F32ToBF16(v[i] * s))
	}
	return v
}

// gains are norm weights in [0.5, 1.5).
func gains(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(0.5 + r.Float64())
	}
	return v
}

// towerFixture is a random tower and heads, on the host and the device.
type towerFixture struct {
	g         TowerGeometry
	audio     drama3.AudioConfig
	cpuW      *drama3.Tower[[]float32]
	heads     *drama3.Heads
	textEmbed []float32
	dev       TowerTensors
}

func newTowerFixture(t *testing.T, r *rand.Rand, cfg *drama3.Config) *towerFixture {
	g, err := TowerGeometryOf(&cfg.Audio)
	if err != nil {
		t.Fatal(err)
	}
	D := g.Dim
	f := &towerFixture{g: g, audio: cfg.Audio, cpuW: &drama3.Tower[[]float32]{}}
	var a testArena
	f.dev.Geometry = g
	f.dev.Codebooks = make([]Tensor, len(g.Entries))
	for i, n := range g.Entries {
		e := roundBF16(r, n, D)
		for k := range e { // embeddings of unit scale, as a table's rows are
			e[k] = checkpoint.BF16ToF32(checkpoint.F32ToBF16(e[k] * float32(math.Sqrt(float64(D)))))
		}
		f.cpuW.Embeddings = append(f.cpuW.Embeddings, e)
		a.bf16(&f.dev.Codebooks[i], e)
	}
	layer := func(dl *TowerLayerTensors, headRows int) drama3.TowerLayer[[]float32] {
		hd := g.HeadDim
		l := drama3.TowerLayer[[]float32]{
			ENorm: gains(r, D), HNorm: gains(r, D), AttentionNorm: gains(r, D), FFNNorm: gains(r, D), OutNorm: gains(r, D),
			EHProj: roundBF16(r, D, 2*D), WQKV: roundBF16(r, (g.Heads+2*g.KVHeads)*hd, D), WO: roundBF16(r, D, g.Heads*hd),
			W1: roundBF16(r, g.FFN, D), W3: roundBF16(r, g.FFN, D), W2: roundBF16(r, D, g.FFN),
		}
		a.f32(&dl.ENorm, l.ENorm)
		a.f32(&dl.HNorm, l.HNorm)
		a.f32(&dl.AttentionNorm, l.AttentionNorm)
		a.f32(&dl.FFNNorm, l.FFNNorm)
		a.f32(&dl.OutNorm, l.OutNorm)
		a.bf16(&dl.EHProj, l.EHProj)
		a.bf16(&dl.WQKV, l.WQKV)
		a.bf16(&dl.WO, l.WO)
		a.bf16(&dl.W1, l.W1)
		a.bf16(&dl.W3, l.W3)
		a.bf16(&dl.W2, l.W2)
		if headRows > 0 {
			l.Head = roundBF16(r, headRows, D)
			a.bf16(&dl.Head, l.Head)
		}
		return l
	}
	f.dev.Shared = make([]TowerLayerTensors, g.SharedLayers)
	f.dev.Residual = make([]TowerLayerTensors, g.ResidualLayers())
	for i := range f.dev.Shared {
		f.cpuW.Shared = append(f.cpuW.Shared, layer(&f.dev.Shared[i], 0))
	}
	for i := range f.dev.Residual {
		f.cpuW.Residual = append(f.cpuW.Residual, layer(&f.dev.Residual[i], g.Entries[i+1]))
	}
	// A text vocabulary larger than the semantic codes, their tokens at
	// shuffled ids; the semantic head a separate table.
	vocab := g.Entries[0] + 157
	tokens := r.Perm(vocab)[:g.Entries[0]]
	// End of speech's row is zero: its logit 0 sits mid-distribution, never
	// among the top 30 the drawn frames keep, so a take does not end early.
	semantic := roundBF16(r, g.Entries[0]+1, D)
	clear(semantic[g.Entries[0]*D:])
	f.heads = &drama3.Heads{Dim: D, Semantic: semantic, SemanticTokens: tokens}
	f.textEmbed = roundBF16(r, vocab, D)
	f.dev.TextVocab, f.dev.SemanticTokens = vocab, tokens
	a.bf16(&f.dev.SemanticHead, f.heads.Semantic)
	a.bf16(&f.dev.TextEmbed, f.textEmbed)
	a.upload(t)
	return f
}

func TestTowerFrames(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  *drama3.Config
	}{{"demo", drama3.TinyConfig()}, {"odd", drama3.TinyOddConfig()}} {
		t.Run(c.name, func(t *testing.T) { testTowerFrames(t, c.cfg, nil, nil) })
		// Each of a frame's launch sequences (the default is one of them).
		for _, f := range towerFusionVariants {
			t.Run(c.name+"/"+f.String(), func(t *testing.T) { testTowerFrames(t, c.cfg, nil, &f) })
		}
		// The drawn codes' embedding as two GEMVs, and without tables
		// (PROSCENIUM_GPU_TOWER_EH=split, =off; the default merges them).
		for _, m := range []struct {
			name string
			mode towerEHMode
		}{{"eh-split", towerEHSplit}, {"eh-off", towerEHOff}} {
			t.Run(c.name+"/"+m.name, func(t *testing.T) { withTowerEH(m.mode, func() { testTowerFrames(t, c.cfg, nil, nil) }) })
		}
		// A frame row's attention on the _h128 instances (the rule gives
		// one row the wide ones: towerAttn): 64 cached rows a split, the
		// tiny caches one split, no merge (PROSCENIUM_GPU_TOWER_ATTN=few);
		// eight, several splits, merged (=8).
		t.Run(c.name+"/attn-few", func(t *testing.T) {
			t.Setenv("PROSCENIUM_GPU_TOWER_ATTN", "few")
			testTowerFrames(t, c.cfg, nil, nil)
		})
		t.Run(c.name+"/attn-keys-8", func(t *testing.T) {
			t.Setenv("PROSCENIUM_GPU_TOWER_ATTN", "8")
			testTowerFrames(t, c.cfg, nil, nil)
		})
		// Code 0's embedding by table with the first layer's W_h after the
		// semantic draw, and without code-0 tables
		// (PROSCENIUM_GPU_TOWER_EH0=after, =off; the default projects it
		// beside the semantic head).
		for _, m := range []struct {
			name string
			mode towerEH0Mode
		}{{"eh0-after", towerEH0After}, {"eh0-off", towerEH0Off}} {
			t.Run(c.name+"/"+m.name, func(t *testing.T) { withTowerEH0(m.mode, func() { testTowerFrames(t, c.cfg, nil, nil) }) })
		}
		// The table layers' norms as launches of their own, not in the
		// draw before them (PROSCENIUM_GPU_DRAW_NORM=0).
		t.Run(c.name+"/draw-norm-off", func(t *testing.T) {
			defer func(was bool) { drawNorm = was }(drawNorm)
			drawNorm = false
			testTowerFrames(t, c.cfg, nil, nil)
		})
		// The lean draw (PROSCENIUM_GPU_SAMPLER=lean): its codes and the
		// embedding halves it writes, in the frame graph.
		t.Run(c.name+"/lean-draw", func(t *testing.T) {
			withSampler("sample_logits_lean", func() { testTowerFrames(t, c.cfg, nil, nil) })
		})
		if testing.Short() {
			continue
		}
		// Every projection on each other GEMV instance (the benchmark
		// times them: any may become the tower's).
		for i := range GemvBF16Variants {
			v := &GemvBF16Variants[i]
			t.Run(c.name+"/"+v.Name(), func(t *testing.T) { testTowerFrames(t, c.cfg, v, nil) })
		}
	}
}

// testTowerFrames checks a tower with every projection on GEMV instance gemv
// (nil: ChooseGemv's) and launch sequence fuse (nil: NewTower's).
func testTowerFrames(t *testing.T, cfg *drama3.Config, gemv *GemvVariant, fuse *towerFusion) {
	const (
		promptRows = 13 // text rows; prefilled in chunks of 5 (a ragged last)
		forced     = 60
		drawn      = 12
		tol        = 1e-4
	)
	r := newRand(t)
	f := newTowerFixture(t, r, cfg)
	g := f.g
	D, ncb := g.Dim, len(g.Entries)
	ref, err := cpu.NewTower(&f.audio, f.cpuW)
	if err != nil {
		t.Fatal(err)
	}
	tw, err := NewTower(dev, &f.dev, TowerOptions{MaxRows: promptRows + forced + drawn + 2, PrefillChunk: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	tw.gemv = gemv
	if fuse != nil {
		tw.fuse = *fuse
	}
	settings, seed := sampling.Settings{Temperature: 0.7, TopP: 0.9, TopK: 30}, r.Uint64()
	if err := tw.Begin(settings, seed); err != nil {
		t.Fatal(err)
	}

	// Prompt rows.
	text := randNonZero(r, promptRows*D)
	textBlk := upload(t, text)
	if err := dev.Run(func(q *Queue) error { return tw.Prefill(q, Whole(textBlk), promptRows) }); err != nil {
		t.Fatal(err)
	}
	if err := ref.Text(text, promptRows); err != nil {
		t.Fatal(err)
	}

	// One frame graph serves every frame; the first frames run as plain
	// launches, the rest replay it.
	hidden := alloc(t, D*4)
	pinned, err := dev.AllocPinned(FrameResultBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(pinned)
	frame := func(q *Queue) error { return firstErr(tw.Frame(q, Whole(hidden)), tw.CopyResult(q, pinned)) }
	var graph *Graph
	if err := dev.Run(func(q *Queue) (err error) {
		graph, err = q.Capture(frame)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer dev.Run(func(*Queue) error { graph.Destroy(); return nil })

	sampler, err := drama3.NewSampler(settings, seed)
	if err != nil {
		t.Fatal(err)
	}
	worst := map[string]float64{}
	semRef := make([]float32, g.Entries[0]+1)
	var semGot, semWant []float32 // every frame's semantic logits: the head follows the numerics contract
	fbRef := make([]float32, D)
	for fi := 0; fi < forced+drawn; fi++ {
		h := randNonZero(r, D)
		var codes []int
		if fi < forced {
			codes = make([]int, ncb)
			for i := range codes {
				codes[i] = r.IntN(g.Entries[i])
			}
		}
		if err := firstErr(Upload(dev, hidden, 0, h), tw.Force(codes)); err != nil {
			t.Fatal(err)
		}
		// Outputs and the scratch the launches hand on (eh_proj inputs, the
		// residual, norms, h_out, q/k/v, attention, projections, SwiGLU)
		// poisoned: whatever a launch fails to write shows up as NaN.
		scratch := []*Block{tw.SemanticLogits(), tw.FeedbackRow(), tw.cat, tw.x, tw.normed, tw.h, tw.qkv, tw.attn,
			tw.mixed, tw.gate}
		for _, blk := range append(scratch, tw.residual...) {
			if err := dev.Fill32(blk, nanBits); err != nil {
				t.Fatal(err)
			}
		}
		if err := dev.Run(func(q *Queue) error {
			if fi%2 == 0 {
				return frame(q)
			}
			return q.LaunchGraph(graph)
		}); err != nil {
			t.Fatal(err)
		}
		res, err := tw.Result()
		if err != nil {
			t.Fatal(err)
		}
		if pr := tw.ReadResult(pinned); fmt.Sprint(pr) != fmt.Sprint(res) {
			t.Fatalf("frame %d: pinned copy of the result %+v, control block %+v", fi, pr, res)
		}
		if err := res.Err(); err != nil {
			t.Fatalf("frame %d: %v", fi, err)
		}
		if res.End {
			t.Fatalf("frame %d: end of speech reported", fi)
		}
		check := func(what string, got, want []float32) {
			t.Helper()
			rel := finiteRelErr(t, fmt.Sprintf("frame %d %s", fi, what), got, want)
			worst[what] = max(worst[what], rel)
			if !(rel <= tol) {
				t.Fatalf("frame %d %s: relative error %.3g > %g", fi, what, rel, tol)
			}
		}
		cpu.MatVec(semRef, f.heads.Semantic, h, f.heads.Codes()+1, f.heads.Dim)
		check("semantic logits", download(t, tw.SemanticLogits(), len(semRef)), semRef)
		semGot = append(semGot, download(t, tw.SemanticLogits(), len(semRef))...)
		semWant = append(semWant, semRef...)
		if fi >= forced { // drawn on the device: the CPU sampler on the device's logits
			codes = res.Codes
			got := download(t, tw.SemanticLogits(), len(semRef))
			if c, err := sampler.Sample(got, fi, 0); err != nil || c != codes[0] {
				t.Fatalf("frame %d codebook 0: device drew %d, CPU sampler %d (%v)", fi, codes[0], c, err)
			}
		} else if fmt.Sprint(res.Codes) != fmt.Sprint(codes) {
			t.Fatalf("frame %d: forced %v, result %v", fi, codes, res.Codes)
		}
		if err := ref.Shared(h, codes[0]); err != nil {
			t.Fatal(err)
		}
		for j := 1; j < ncb; j++ {
			want := make([]float32, g.Entries[j])
			if err := ref.Residual(j, codes[j-1], want); err != nil {
				t.Fatal(err)
			}
			got := download(t, tw.ResidualLogits(j), len(want))
			check(fmt.Sprintf("codebook %d logits", j), got, want)
			if fi >= forced {
				if c, err := sampler.Sample(got, fi, j); err != nil || c != codes[j] {
					t.Fatalf("frame %d codebook %d: device drew %d, CPU sampler %d (%v)", fi, j, codes[j], c, err)
				}
			}
		}
		if err := f.heads.FeedbackRow(fbRef, codes, f.textEmbed, f.cpuW.Embeddings); err != nil {
			t.Fatal(err)
		}
		got := download(t, tw.FeedbackRow(), D)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(fbRef[i]) {
				t.Fatalf("frame %d feedback row [%d] = %v, CPU %v (must be bit-exact)", fi, i, got[i], fbRef[i])
			}
		}
	}
	checkBitsIfExact(t, "semantic head (float64 GEMV under exact numerics)", semGot, semWant)
	for what, rel := range worst {
		t.Logf("%s: worst relative error %.3g over %d frames", what, rel, forced+drawn)
	}

	// End of speech forced: reported, codes of the tower still in range.
	codes := make([]int, ncb)
	codes[0] = g.Entries[0]
	if err := tw.Force(codes); err != nil {
		t.Fatal(err)
	}
	if err := dev.Run(func(q *Queue) error { return q.LaunchGraph(graph) }); err != nil {
		t.Fatal(err)
	}
	res, err := tw.Result()
	if err != nil {
		t.Fatal(err)
	}
	if !res.End || res.Err() != nil {
		t.Fatalf("end of speech frame: %+v (%v)", res, res.Err())
	}
	// The cache holds promptRows+forced+drawn+2 rows: the next frame fits,
	// the one after overflows and says so.
	if err := tw.Force(nil); err != nil {
		t.Fatal(err)
	}
	for i, wantFull := range []bool{false, true} {
		if err := dev.Run(func(q *Queue) error { return q.LaunchGraph(graph) }); err != nil {
			t.Fatal(err)
		}
		res, err := tw.Result()
		if err != nil {
			t.Fatal(err)
		}
		if full := res.Error&frameErrKVFull != 0; full != wantFull {
			t.Fatalf("extra frame %d: KV full %v, want %v (%v)", i, full, wantFull, res.Err())
		}
	}
}

func TestTowerRefusesBadSetup(t *testing.T) {
	r := newRand(t)
	f := newTowerFixture(t, r, drama3.TinyConfig())
	if _, err := NewTower(dev, &f.dev, TowerOptions{MaxRows: TowerMaxRows + 1}); err == nil {
		t.Error("a KV cache past the attention kernel's rows accepted")
	}
	bad := f.dev
	bad.Residual = append([]TowerLayerTensors(nil), f.dev.Residual...)
	bad.Residual[3].W2.Off = bad.Residual[3].W2.Block.Bytes - 2
	if _, err := NewTower(dev, &bad, TowerOptions{MaxRows: 8}); err == nil {
		t.Error("a tensor past its block accepted")
	}
	wide := f.dev
	wide.Geometry.Dim = TowerMaxDim + 8
	if _, err := NewTower(dev, &wide, TowerOptions{MaxRows: 8}); err == nil || !strings.Contains(err.Error(), "dim") {
		t.Errorf("a row wider than the norm kernels hold: %v", err)
	}
	tw, err := NewTower(dev, &f.dev, TowerOptions{MaxRows: 8})
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Close()
	if err := tw.Force([]int{0, 1024, 0, 0, 0, 0, 0, 0, 0, 0}); err == nil {
		t.Error("forced code past its codebook accepted")
	}
	if err := tw.Begin(sampling.Settings{Temperature: 1, TopP: 0}, 1); err == nil {
		t.Error("top_p 0 accepted")
	}
}

func TestGatherBF16Rows(t *testing.T) {
	r := newRand(t)
	const vocab, width = 300, 136
	table := bf16s(randNonZero(r, vocab*width))
	ids := []int32{299, 0, 17, 17, 150}
	src := upload(t, table)
	idb := upload(t, ids)
	dst := alloc(t, len(ids)*width*2)
	if err := dev.Fill32(dst, nanBits); err != nil {
		t.Fatal(err)
	}
	if err := dev.Run(func(q *Queue) error {
		return q.GatherBF16Rows(Tensor{Block: dst}, Tensor{Block: src}, idb, len(ids), width)
	}); err != nil {
		t.Fatal(err)
	}
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	got := make([]uint16, len(ids)*width)
	if err := Download(dev, got, dst, 0); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		for c := 0; c < width; c++ {
			if got[i*width+c] != table[int(id)*width+c] {
				t.Fatalf("row %d (id %d) column %d: %#x, want %#x", i, id, c, got[i*width+c], table[int(id)*width+c])
			}
		}
	}
}

//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
	"proscenium/engine/drama3"
)

// Device tests of the mixers and the GEMM (kernels/gemm.cu, deltanet.cu,
// attention.cu) against engine/cpu, on random non-zero inputs with the
// outputs poisoned with NaN first. Geometries: Drama 3's (full) and the odd
// golden checkpoint's (sizes that are no power of two).

var (
	fullGeometry = mixerShape{Hidden: 2048, Eps: 1e-6,
		Heads: 16, KVHeads: 2, HeadDim: 256, RotaryDim: 64, RopeTheta: 1e7,
		LinKeyHeads: 16, LinValueHeads: 32, LinKeyDim: 128, LinValueDim: 128, ConvKernel: 4}
	oddGeometry = mixerShape{Hidden: 136, Eps: 1e-6,
		Heads: 3, KVHeads: 1, HeadDim: 24, RotaryDim: 12, RopeTheta: 1e6,
		LinKeyHeads: 2, LinValueHeads: 6, LinKeyDim: 20, LinValueDim: 28, ConvKernel: 4}
	// mixerShapes is the two, named, for the tests that run each.
	mixerShapes = []struct {
		name string
		g    mixerShape
	}{{"full", fullGeometry}, {"odd", oddGeometry}}
)

// mixerShape is the geometry of the mixer tests; refGeometry turns it into
// engine/cpu's, the one place (with the two weight literals below) that
// spells the reference's types.
type mixerShape struct {
	Hidden                     int
	Eps                        float32
	Heads, KVHeads, HeadDim    int
	RotaryDim                  int
	RopeTheta                  float64
	LinKeyHeads, LinValueHeads int
	LinKeyDim, LinValueDim     int
	ConvKernel                 int
}

func (s mixerShape) refGeometry() *drama3.TextConfig {
	return &drama3.TextConfig{HiddenSize: s.Hidden, RMSNormEps: float64(s.Eps), NumHeads: s.Heads, NumKVHeads: s.KVHeads, HeadDim: s.HeadDim,
		PartialRotaryFactor: float64(s.RotaryDim) / float64(s.HeadDim), RopeTheta: s.RopeTheta,
		LinearNumKeyHeads: s.LinKeyHeads, LinearNumValueHeads: s.LinValueHeads,
		LinearKeyHeadDim: s.LinKeyDim, LinearValueHeadDim: s.LinValueDim, ConvKernel: s.ConvKernel}
}

// scaled is randNonZero times s.
func scaled(r *rand.Rand, n int, s float32) []float32 {
	v := randNonZero(r, n)
	for i := range v {
		v[i] *= s
	}
	return v
}

// bf16Weights is a random [rows, cols] matrix exact in BF16, scaled so a
// product with a unit input stays near unit size.
func bf16Weights(r *rand.Rand, rows, cols int) ([]uint16, []float32) {
	h := bf16s(scaled(r, rows*cols, float32(2/math.Sqrt(float64(cols)))))
	return h, bf16ToF32(h)
}

// arena packs tensors one after another (16-byte aligned) into one device
// block, as the backbone's loader does.
type arena struct {
	parts [][]byte
	offs  []int64
	size  int64
	b     *Block
}

func (a *arena) add(data any) int {
	var raw []byte
	switch v := data.(type) {
	case []uint16:
		raw = make([]byte, 2*len(v))
		for i, x := range v {
			raw[2*i], raw[2*i+1] = byte(x), byte(x>>8)
		}
	case []float32:
		raw = make([]byte, 4*len(v))
		for i, x := range v {
			b := math.Float32bits(x)
			raw[4*i], raw[4*i+1], raw[4*i+2], raw[4*i+3] = byte(b), byte(b>>8), byte(b>>16), byte(b>>24)
		}
	case []uint8:
		raw = v
	default:
		panic("arena type")
	}
	a.offs = append(a.offs, a.size)
	a.parts = append(a.parts, raw)
	a.size += (int64(len(raw)) + 15) &^ 15
	return len(a.parts) - 1
}

func (a *arena) upload(t *testing.T) {
	t.Helper()
	all := make([]byte, a.size)
	for i, p := range a.parts {
		copy(all[a.offs[i]:], p)
	}
	a.b = upload(t, all)
}

func (a *arena) at(i int) Tensor { return Tensor{a.b, a.offs[i]} }

// deltaNetCase is a DeltaNet layer with its weights on the device and in
// float32 for the reference.
type deltaNetCase struct {
	g     mixerShape
	gref  *drama3.TextConfig
	ref   drama3.DeltaNet[[]float32]
	layer DeltaNetLayer
}

func deviceDeltaNetGeometry(g *mixerShape) DeltaNetGeometry {
	return DeltaNetGeometry{Hidden: g.Hidden, KeyHeads: g.LinKeyHeads, ValueHeads: g.LinValueHeads,
		KeyDim: g.LinKeyDim, ValueDim: g.LinValueDim, ConvKernel: g.ConvKernel, Eps: g.Eps}
}

// newDeltaNetCase makes random weights; stacked puts the four input
// projections one after another (one launch), otherwise apart.
func newDeltaNetCase(t *testing.T, r *rand.Rand, g mixerShape, maxRows int, stacked bool) *deltaNetCase {
	dg := deviceDeltaNetGeometry(&g)
	if err := dg.Validate(); err != nil {
		t.Fatal(err)
	}
	ch, vd, nv, hid := dg.Channels(), g.LinValueHeads*g.LinValueDim, g.LinValueHeads, g.Hidden
	c := &deltaNetCase{g: g, gref: g.refGeometry()}
	var a arena
	qkvH, qkv := bf16Weights(r, ch, hid)
	zH, z := bf16Weights(r, vd, hid)
	bH, b := bf16Weights(r, nv, hid)
	aH, av := bf16Weights(r, nv, hid)
	iq := a.add(qkvH)
	if !stacked {
		a.add(make([]uint8, 48))
	}
	iz := a.add(zH)
	ib := a.add(bH)
	if !stacked {
		a.add(make([]uint8, 16))
	}
	ia := a.add(aH)
	conv := scaled(r, ch*g.ConvKernel, 0.6)
	dt := scaled(r, nv, 1)
	alog := scaled(r, nv, 1)
	norm := make([]float32, g.LinValueDim)
	for i := range norm {
		norm[i] = 1 + 0.3*float32(r.Float64()-0.5)
	}
	outH, out := bf16Weights(r, hid, vd)
	ic, idt, ial, in, io := a.add(conv), a.add(dt), a.add(alog), a.add(norm), a.add(outH)
	a.upload(t)
	c.ref = drama3.DeltaNet[[]float32]{InProjQKV: qkv, InProjZ: z, InProjB: b, InProjA: av, Conv1D: conv, DtBias: dt, ALog: alog,
		Norm: norm, OutProj: out}
	state := alloc(t, int(dg.StateBytes()))
	if err := dev.Run(func(q *Queue) error { return q.ZeroTensor(Whole(state), dg.StateBytes()) }); err != nil {
		t.Fatal(err)
	}
	c.layer = DeltaNetLayer{G: dg, State: Whole(state), MaxRows: maxRows,
		Scratch: Whole(alloc(t, int(dg.ScratchBytes(maxRows)))),
		W: DeltaNetWeights{InQKV: a.at(iq), InZ: a.at(iz), InB: a.at(ib), InA: a.at(ia), Conv: a.at(ic),
			DtBias: a.at(idt), ALog: a.at(ial), Norm: a.at(in), Out: a.at(io)}}
	return c
}

// deltaNetSteps are the one-row kernels a DeltaNet layer can run (the
// cluster step runs the split kernels under exact or before sm_90).
var deltaNetSteps = []struct {
	name string
	step DeltaNetStep
}{{"fused", DeltaNetFusedStep}, {"split", DeltaNetSplitStep}, {"cluster", DeltaNetClusterStep}}

// TestDeltaNetLayer runs prefills and single steps through a DeltaNet layer
// on the device and the CPU (both run a prefill through the chunked form)
// and compares every output and the final state, with each one-row kernel
// (the bits, which also depend on the projections, are logged;
// TestDeltaNetMixBits requires the mixer's).
func TestDeltaNetLayer(t *testing.T) {
	r := newRand(t)
	for _, tc := range []struct {
		name    string
		g       mixerShape
		stacked bool
	}{{"full", fullGeometry, true}, {"odd", oddGeometry, false}} {
		for _, st := range deltaNetSteps {
			t.Run(tc.name+"/"+st.name, func(t *testing.T) { testDeltaNetLayer(t, r, tc.g, tc.stacked, st.step) })
		}
	}
}

func testDeltaNetLayer(t *testing.T, r *rand.Rand, g mixerShape, stacked bool, step DeltaNetStep) {
	const maxRows = 80
	c := newDeltaNetCase(t, r, g, maxRows, stacked)
	c.layer.Step = step
	hid := g.Hidden
	var ref cpu.DeltaNetRef
	x := alloc(t, maxRows*hid*4)
	// 70 rows (a full chunk and a ragged one), steps, 2 rows (fewer than the
	// conv's history), a step.
	for i, n := range []int{70, 1, 1, 1, 2, 1} {
		xs := randNonZero(r, n*hid)
		if err := Upload(dev, x, 0, xs); err != nil {
			t.Fatal(err)
		}
		out := poisoned(t, n*hid)
		if err := dev.Run(func(q *Queue) error { return q.DeltaNetForward(&c.layer, Whole(out), Whole(x), n) }); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, n*hid)
		cpu.DeltaNetForwardRef(want, xs, n, &c.ref, c.gref, &ref)
		got := download(t, out, n*hid)
		checkClose(t, fmt.Sprintf("call %d (%d rows)", i, n), got, want, 1e-4)
		logDeltaNetBits(t, fmt.Sprintf("call %d (%d rows)", i, n), got, want)
	}
	dg := c.layer.G
	s := make([]float32, dg.ValueHeads*dg.KeyDim*dg.ValueDim)
	if err := Download(dev, s, c.layer.State.Block, 4*int64(dg.convStateFloats())); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "recurrent state", s, ref.S(), 1e-4)
	logDeltaNetBits(t, "recurrent state", s, ref.S())
}

// TestDeltaNetChunkedMatchesRecurrent is the CPU's own bound the device's
// recurrence is held to: its chunked and recurrent forms agree within 1e-5.
func TestDeltaNetChunkedMatchesRecurrent(t *testing.T) {
	r := newRand(t)
	g := fullGeometry
	g.LinKeyHeads, g.LinValueHeads = 2, 4
	const n = 150
	ch := 2*g.LinKeyHeads*g.LinKeyDim + g.LinValueHeads*g.LinValueDim
	conv := randNonZero(r, n*ch)
	for t0 := 0; t0 < n; t0++ { // normed q and k, as the mixer feeds them
		for h := 0; h < 2*g.LinKeyHeads; h++ {
			v := conv[t0*ch+h*g.LinKeyDim:][:g.LinKeyDim]
			var ss float64
			for _, x := range v {
				ss += float64(x * x)
			}
			for i := range v {
				v[i] /= float32(math.Sqrt(ss))
			}
		}
	}
	beta, decay := make([]float32, n*g.LinValueHeads), make([]float32, n*g.LinValueHeads)
	for i := range beta {
		beta[i] = float32(r.Float64())
		decay[i] = -float32(r.Float64())
	}
	a := make([]float32, n*g.LinValueHeads*g.LinValueDim)
	b := make([]float32, len(a))
	sa := make([]float32, g.LinValueHeads*g.LinKeyDim*g.LinValueDim)
	sb := make([]float32, len(sa))
	cpu.DeltaNetRecurrentRef(a, conv, beta, decay, n, g.refGeometry(), sa)
	cpu.DeltaNetChunkedRef(b, conv, beta, decay, n, g.refGeometry(), sb)
	checkClose(t, "chunked vs recurrent outputs", b, a, 1e-5)
	checkClose(t, "chunked vs recurrent state", sb, sa, 1e-5)
}

type attentionCase struct {
	g     mixerShape
	gref  *drama3.TextConfig
	ref   drama3.Attention[[]float32]
	layer AttentionLayer
	pos   *Block
}

func deviceAttentionGeometry(g *mixerShape) AttentionGeometry {
	return AttentionGeometry{Hidden: g.Hidden, Heads: g.Heads, KVHeads: g.KVHeads, HeadDim: g.HeadDim,
		RotaryDim: g.RotaryDim, RopeTheta: g.RopeTheta, Eps: g.Eps}
}

func newAttentionCase(t *testing.T, r *rand.Rand, g mixerShape, maxRows, capacity int, stacked bool) *attentionCase {
	ag := deviceAttentionGeometry(&g)
	if err := ag.Validate(); err != nil {
		t.Fatal(err)
	}
	hid, hd := g.Hidden, g.HeadDim
	var a arena
	qH, qf := bf16Weights(r, g.Heads*2*hd, hid)
	kH, kf := bf16Weights(r, g.KVHeads*hd, hid)
	vH, vf := bf16Weights(r, g.KVHeads*hd, hid)
	iq := a.add(qH)
	if !stacked {
		a.add(make([]uint8, 32))
	}
	ik, iv := a.add(kH), a.add(vH)
	oH, of := bf16Weights(r, hid, g.Heads*hd)
	qn, kn := scaled(r, hd, 0.3), scaled(r, hd, 0.3)
	io, iqn, ikn := a.add(oH), a.add(qn), a.add(kn)
	a.upload(t)
	c := &attentionCase{g: g, gref: g.refGeometry(), ref: drama3.Attention[[]float32]{QProj: qf, KProj: kf, VProj: vf, OProj: of, QNorm: qn, KNorm: kn}}
	c.pos = upload(t, []int32{0})
	c.layer = AttentionLayer{G: ag, Capacity: capacity, MaxRows: maxRows,
		KV:      Whole(alloc(t, int(ag.KVBytes(capacity)))),
		Scratch: Whole(alloc(t, int(ag.ScratchBytes(maxRows, capacity)))),
		W:       AttentionWeights{Q: a.at(iq), K: a.at(ik), V: a.at(iv), O: a.at(io), QNorm: a.at(iqn), KNorm: a.at(ikn)}}
	return c
}

// forward runs n rows through the device layer and advances the position.
func (c *attentionCase) forward(q *Queue, out, x *Block, n, maxLen int) error {
	return firstErr(q.AttentionForward(&c.layer, Whole(out), Whole(x), n, Whole(c.pos), maxLen),
		q.AddInt32(Whole(c.pos), n))
}

// TestAttentionLayer runs prefills and single steps through an attention
// layer on the device and the CPU and compares every output and the cache,
// under both policies (fast runs a call of more rows through the flash
// core, attentionFlash; a row past the capacity is NaN in either).
func TestAttentionLayer(t *testing.T) { eachNumerics(t, testAttentionLayer) }

func testAttentionLayer(t *testing.T) {
	r := newRand(t)
	for _, tc := range []struct {
		name    string
		g       mixerShape
		stacked bool
	}{{"full", fullGeometry, true}, {"odd", oddGeometry, false}} {
		t.Run(tc.name, func(t *testing.T) {
			const maxRows, capacity = 80, 200
			c := newAttentionCase(t, r, tc.g, maxRows, capacity, tc.stacked)
			hid := tc.g.Hidden
			var ref cpu.AttentionRef
			x := alloc(t, maxRows*hid*4)
			for i, n := range []int{70, 1, 1, 3, 1, 65} {
				xs := randNonZero(r, n*hid)
				if err := Upload(dev, x, 0, xs); err != nil {
					t.Fatal(err)
				}
				out := poisoned(t, n*hid)
				maxLen := 0 // the whole cache, as a captured step
				if i%2 == 0 {
					maxLen = ref.Rows() + n
				}
				if err := dev.Run(func(q *Queue) error { return c.forward(q, out, x, n, maxLen) }); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, n*hid)
				cpu.AttentionForwardRef(want, xs, n, &c.ref, c.gref, &ref)
				checkClose(t, fmt.Sprintf("call %d (%d rows)", i, n), download(t, out, n*hid), want, 1e-4)
			}
			rows := ref.Rows()
			kv := download(t, c.layer.KV.Block, int(c.layer.G.KVBytes(capacity)/4))
			w := tc.g.KVHeads * tc.g.HeadDim
			checkClose(t, "cached keys", kv[:rows*w], ref.Keys(), 1e-5)
			checkClose(t, "cached values", kv[capacity*w:capacity*w+rows*w], ref.Values(), 1e-5)
		})
	}
	t.Run("past capacity", func(t *testing.T) {
		c := newAttentionCase(t, r, oddGeometry, 4, 4, true)
		hid := oddGeometry.Hidden
		x := upload(t, randNonZero(r, 4*hid))
		out := poisoned(t, 4*hid)
		if err := dev.Run(func(q *Queue) error { return c.forward(q, out, x, 3, 0) }); err != nil {
			t.Fatal(err)
		}
		if err := dev.Run(func(q *Queue) error { return c.forward(q, out, x, 2, 0) }); err != nil {
			t.Fatal(err)
		}
		got := download(t, out, 2*hid)
		for i, v := range got {
			if (i >= hid) != math.IsNaN(float64(v)) {
				t.Fatalf("element %d (row %d of 2, the second past the capacity) = %v", i, i/hid, v)
			}
		}
	})
}

// TestAttentionCoreBits runs the attention kernels between the projections
// (attentionCore) on random projected rows and requires the CPU's float32
// bits (attentionCore, the numerics contract) in the gated output and the
// cache: prefills (several rows attending to each other causally, split by
// their bound) and steps (32 splits whatever the cache holds), over caches
// of a few rows and of about 1000.
func TestAttentionCoreBits(t *testing.T) { eachNumerics(t, testAttentionCoreBits) }

func testAttentionCoreBits(t *testing.T) {
	r := newRand(t)
	for _, tc := range mixerShapes {
		t.Run(tc.name, func(t *testing.T) {
			const maxRows, capacity = 64, 1100
			c := newAttentionCase(t, r, tc.g, maxRows, capacity, true)
			g, l := tc.g, &c.layer
			pw, aw := l.G.ProjWidth(), g.Heads*g.HeadDim
			attnOff := l.G.scratchLayout(maxRows, capacity).attn
			var ref cpu.AttentionRef
			calls := []int{5, 1, 3, 1}
			for len(calls) < 19 {
				calls = append(calls, 64) // to 969 rows, unchecked but for the last
			}
			calls = append(calls, 1, 1, 60, 1)
			var worst, total int
			for i, n := range calls {
				proj := randNonZero(r, n*pw)
				if err := Upload(dev, l.Scratch.Block, l.Scratch.Off, proj); err != nil {
					t.Fatal(err)
				}
				maxLen := 0 // a step: the whole cache, as a captured step
				if n > 1 {
					maxLen = ref.Rows() + n
				}
				before := ref.Rows()
				if err := dev.Run(func(q *Queue) error {
					return firstErr(q.attentionCore(l, n, Whole(c.pos), maxLen), q.AddInt32(Whole(c.pos), n))
				}); err != nil {
					t.Fatal(err)
				}
				want := make([]float32, n*aw)
				cpu.AttentionCoreRef(want, proj, n, c.ref.QNorm, c.ref.KNorm, c.gref, &ref)
				if n == 64 && i+1 < len(calls) && calls[i+1] == 64 {
					continue // the fill; its cache rows are checked at the end
				}
				if err := dev.Sync(); err != nil {
					t.Fatal(err)
				}
				got := make([]float32, n*aw)
				if err := Download(dev, got, l.Scratch.Block, l.Scratch.Off+attnOff); err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("call %d (%d rows after %d, %d splits)", i, n, before, attnSplits(n, maxLen, capacity))
				checkClose(t, what, got, want, 1e-5)
				checkBitsIfExact(t, what, got, want)
				d, _ := ULPDiff(got, want)
				worst, total = worst+d, total+len(want)
			}
			rows := ref.Rows()
			kv := download(t, l.KV.Block, int(l.G.KVBytes(capacity)/4))
			w := g.KVHeads * g.HeadDim
			checkClose(t, "cached keys", kv[:rows*w], ref.Keys(), 1e-5)
			checkBitsIfExact(t, "cached keys", kv[:rows*w], ref.Keys())
			checkBitsIfExact(t, "cached values", kv[capacity*w:capacity*w+rows*w], ref.Values())
			t.Logf("all compared outputs: %d/%d differ", worst, total)
		})
	}
}

// TestMixerStepGraph captures one decode step (a DeltaNet layer, an
// attention layer, the position advance) as a graph and replays it: the
// replays must follow the CPU's steps, as the backbone's captured step will.
func TestMixerStepGraph(t *testing.T) {
	r := newRand(t)
	for _, st := range deltaNetSteps {
		for _, g := range []struct {
			name string
			g    mixerShape
		}{{"odd", oddGeometry}, {"full", fullGeometry}} {
			t.Run(g.name+"/"+st.name, func(t *testing.T) { testMixerStepGraph(t, r, g.g, st.step) })
		}
	}
}

func testMixerStepGraph(t *testing.T, r *rand.Rand, g mixerShape, step DeltaNetStep) {
	dn := newDeltaNetCase(t, r, g, 16, true)
	dn.layer.Step = step
	at := newAttentionCase(t, r, g, 16, 64, true)
	var dref cpu.DeltaNetRef
	var aref cpu.AttentionRef
	hid := g.Hidden
	x := alloc(t, 16*hid*4)
	mid := alloc(t, 16*hid*4)
	out := alloc(t, 16*hid*4)
	// A 10-row prefill first, uncaptured.
	xs := randNonZero(r, 10*hid)
	if err := Upload(dev, x, 0, xs); err != nil {
		t.Fatal(err)
	}
	rows := func(q *Queue, n int) error {
		if err := q.DeltaNetForward(&dn.layer, Whole(mid), Whole(x), n); err != nil {
			return err
		}
		return at.forward(q, out, mid, n, 0)
	}
	if err := dev.Run(func(q *Queue) error { return rows(q, 10) }); err != nil {
		t.Fatal(err)
	}
	dm := make([]float32, 10*hid)
	cpu.DeltaNetForwardRef(dm, xs, 10, &dn.ref, dn.gref, &dref)
	want := make([]float32, 10*hid)
	cpu.AttentionForwardRef(want, dm, 10, &at.ref, at.gref, &aref)
	checkClose(t, "prefill", download(t, out, 10*hid), want, 1e-4)

	var graph *Graph
	if err := dev.Run(func(q *Queue) (err error) { graph, err = q.Capture(func(q *Queue) error { return rows(q, 1) }); return }); err != nil {
		t.Fatal(err)
	}
	defer dev.Run(func(q *Queue) error { graph.Destroy(); return nil })
	for s := 0; s < 4; s++ {
		xs := randNonZero(r, hid)
		if err := Upload(dev, x, 0, xs); err != nil {
			t.Fatal(err)
		}
		if err := dev.Fill32(out, nanBits); err != nil {
			t.Fatal(err)
		}
		if err := dev.Run(func(q *Queue) error { return q.LaunchGraph(graph) }); err != nil {
			t.Fatal(err)
		}
		cpu.DeltaNetForwardRef(dm[:hid], xs, 1, &dn.ref, dn.gref, &dref)
		cpu.AttentionForwardRef(want[:hid], dm[:hid], 1, &at.ref, at.gref, &aref)
		checkClose(t, fmt.Sprintf("replay %d", s), download(t, out, hid), want[:hid], 1e-4)
	}
}

// gemmCase is one GEMM shape: Y[n, rows] = X[n, cols]·Wᵀ, dense.
type gemmCase struct {
	name                  string
	n, rows, cols         int
	xstride, ystride, col int // col: Y column the output starts at
}

var gemmCases = []gemmCase{
	{"60x2048→8192", 60, 8192, 2048, 0, 0, 0},
	{"60x4096→2048", 60, 2048, 4096, 0, 0, 0},
	{"60x2048→1281", 60, 1281, 2048, 2056, 0, 0},
	{"300x2048→512", 300, 512, 2048, 0, 0, 0},
	{"65x512→2048", 65, 2048, 512, 0, 0, 0},
	{"ragged 37x136→200", 37, 200, 136, 0, 0, 0},
	{"strided 9x40→136", 9, 136, 40, 44, 150, 7},
	{"tiny 2x8→3", 2, 3, 8, 0, 0, 0},
}

func (c gemmCase) run(t *testing.T, r *rand.Rand, fp8 bool, kernel string) {
	xs := max(c.xstride, c.cols)
	ys := max(c.ystride, c.rows)
	x := randNonZero(r, c.n*xs)
	var wf []float32
	var W, S *Block
	if fp8 {
		wq := randFP8(r, c.rows*c.cols)
		scales := make([]float32, FP8ScaleCount(c.rows, c.cols))
		for i := range scales {
			scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
		}
		wf = checkpoint.DequantFP8Blocks(wq, c.rows, c.cols, scales, FP8Block)
		W, S = upload(t, wq), upload(t, scales)
	} else {
		var wh []uint16
		wh, wf = bf16Weights(r, c.rows, c.cols)
		W = upload(t, wh)
	}
	y := poisoned(t, c.n*ys)
	xb := upload(t, x)
	g := Gemm{N: c.n, Rows: c.rows, Cols: c.cols, XStride: c.xstride, YStride: c.ystride, Kernel: kernel}
	yt := Whole(y).At(4 * int64(c.col))
	err := dev.Run(func(q *Queue) error {
		if fp8 {
			return q.GemmFP8(g, yt, Whole(W), Whole(S), Whole(xb))
		}
		return q.GemmBF16(g, yt, Whole(W), Whole(xb))
	})
	if err != nil {
		t.Fatal(err)
	}
	all := download(t, y, c.n*ys)
	got := make([]float32, 0, c.n*c.rows)
	ref := make([]float32, c.n*c.rows)
	for i := 0; i < c.n; i++ {
		got = append(got, all[i*ys+c.col:i*ys+c.col+c.rows]...)
		cpu.MatVec(ref[i*c.rows:(i+1)*c.rows], wf, x[i*xs:i*xs+c.cols], c.rows, c.cols)
	}
	checkGemm(t, "gemm", kernel, got, ref)
	// The columns left of the output must be untouched.
	for i := 0; i < c.n && c.col > 0; i++ {
		if v := all[i*ys]; !math.IsNaN(float64(v)) {
			t.Fatalf("row %d column 0 written (%v)", i, v)
		}
	}
}

// gemmKernels are the GEMM instances every GEMM test runs: the FP64 ones
// of exact numerics and every tensor-core one of fast numerics
// (gemm_fast.go), or those $PROSCENIUM_GEMM_KERNELS (a regular expression
// matched against the whole name) names: device scripts cut the list to
// what they test.
var gemmKernels = func() []string {
	k := []string{"simt", "tc16", "tc32"}
	for _, s := range gemmMmaShapes {
		k = append(k, s.name())
	}
	return gemmKernelsNamed(k)
}()

func gemmKernelsNamed(all []string) []string {
	pat := os.Getenv("PROSCENIUM_GEMM_KERNELS")
	if pat == "" {
		return all
	}
	re := regexp.MustCompile("^(?:" + pat + ")$")
	var k []string
	for _, n := range all {
		if re.MatchString(n) {
			k = append(k, n)
		}
	}
	return k
}

// checkGemm holds a GEMM instance's output against the CPU's: an FP64
// instance to the CPU's bits (rule 1 of the contract), a tensor-core one
// (three BF16 parts of each activation, float32 sums) within 2e-5.
func checkGemm(t *testing.T, what, kernel string, got, ref []float32) {
	t.Helper()
	checkClose(t, what+" "+kernel, got, ref, 2e-5)
	if _, mma := gemmMmaInstances[kernel]; mma {
		differ, maxULP := ULPDiff(got, ref)
		t.Logf("%s %s (fast numerics): %d/%d differ from the CPU's bits, max %d ULP", what, kernel, differ, len(ref), maxULP)
		return
	}
	checkProjBits(t, what+" "+kernel, got, ref)
}

func TestGemmBF16(t *testing.T) {
	r := newRand(t)
	for _, c := range gemmCases {
		for _, k := range gemmKernels {
			t.Run(c.name+"/"+k, func(t *testing.T) { c.run(t, r, false, k) })
		}
	}
}

func TestGemmFP8(t *testing.T) {
	r := newRand(t)
	for _, c := range gemmCases {
		for _, k := range gemmKernels {
			t.Run(c.name+"/"+k, func(t *testing.T) { c.run(t, r, true, k) })
		}
	}
}

// TestGemmGrouped routes n tokens to top-k of mats experts, sorts the
// assignments by expert and runs the grouped GEMM (offsets, ids, row ids on
// the device), against a MatVec per assignment.
func TestGemmGrouped(t *testing.T) {
	r := newRand(t)
	for _, c := range []struct {
		name                   string
		n, k, mats, rows, cols int
		fp8, ids               bool
	}{
		{"fp8 60 tokens top8 of 64, 2048→1024", 60, 8, 64, 1024, 2048, true, false},
		{"fp8 300 tokens top8 of 40, 512→2048", 300, 8, 40, 2048, 512, true, true},
		{"bf16 odd 13 tokens top3 of 6, 136→80", 13, 3, 6, 80, 136, false, true},
		{"fp8 odd 70 tokens top3 of 6, 40→136", 70, 3, 6, 136, 40, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			W, S, wf := expertWeights(t, r, c.fp8, c.mats, c.rows, c.cols)
			x := randNonZero(r, c.n*c.cols)
			// Route: each token to k distinct experts; group by expert. With
			// ids, group e is expert perm[e] (only experts that got rows).
			byExpert := make([][]int32, c.mats)
			for tok := 0; tok < c.n; tok++ {
				for _, e := range distinctIDs(r, c.k, c.mats) {
					byExpert[e] = append(byExpert[e], int32(tok))
				}
			}
			var offsets, ids, rowIDs []int32
			var groupMat []int
			offsets = append(offsets, 0)
			for e := 0; e < c.mats; e++ {
				if c.ids && len(byExpert[e]) == 0 {
					continue
				}
				rowIDs = append(rowIDs, byExpert[e]...)
				offsets = append(offsets, int32(len(rowIDs)))
				ids = append(ids, int32(e))
				groupMat = append(groupMat, e)
			}
			total := len(rowIDs)
			g := Gemm{N: total, Rows: c.rows, Cols: c.cols, Groups: len(groupMat), Mats: c.mats, XRows: c.n,
				MaxGroupRows: c.n, Offsets: Whole(upload(t, offsets)), RowIds: Whole(upload(t, rowIDs))}
			if c.ids {
				g.Ids = Whole(upload(t, ids))
			}
			ref := make([]float32, total*c.rows)
			for gi, m := range groupMat {
				w := wf(m)
				for i := offsets[gi]; i < offsets[gi+1]; i++ {
					tok := int(rowIDs[i])
					cpu.MatVec(ref[int(i)*c.rows:(int(i)+1)*c.rows], w, x[tok*c.cols:(tok+1)*c.cols], c.rows, c.cols)
				}
			}
			xb := upload(t, x)
			for _, k := range gemmKernels {
				g.Kernel = k
				y := poisoned(t, total*c.rows)
				err := dev.Run(func(q *Queue) error {
					if c.fp8 {
						return q.GemmFP8(g, Whole(y), Whole(W), Whole(S), Whole(xb))
					}
					return q.GemmBF16(g, Whole(y), Whole(W), Whole(xb))
				})
				if err != nil {
					t.Fatal(err)
				}
				got := download(t, y, total*c.rows)
				checkGemm(t, "grouped gemm", k, got, ref)
			}
		})
	}
}

// expertWeights uploads mats random [rows, cols] matrices, block-FP8 with
// random scales (S) or BF16 (S nil), and returns wf(m): matrix m as the
// float32 the device computes with.
func expertWeights(t *testing.T, r *rand.Rand, fp8 bool, mats, rows, cols int) (W, S *Block, wf func(m int) []float32) {
	t.Helper()
	per := rows * cols
	if fp8 {
		wq := randFP8(r, mats*per)
		ns := FP8ScaleCount(rows, cols)
		scales := make([]float32, mats*ns)
		for i := range scales {
			scales[i] = float32(1e-3 * (1 + 9*r.Float64()))
		}
		return upload(t, wq), upload(t, scales), func(m int) []float32 {
			return checkpoint.DequantFP8Blocks(wq[m*per:(m+1)*per], rows, cols, scales[m*ns:(m+1)*ns], FP8Block)
		}
	}
	wh, f := bf16Weights(r, mats*rows, cols)
	return upload(t, wh), nil, func(m int) []float32 { return f[m*per : (m+1)*per] }
}

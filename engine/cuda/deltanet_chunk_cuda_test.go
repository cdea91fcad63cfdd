//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/cpu"
)

// Device tests of the chunked DeltaNet prefill (kernels/deltanet_chunk.cu)
// against engine/cpu's chunked form, at Drama 3's geometry and the odd golden
// checkpoint's (key/value dims 20/28: no multiple of 32), with the outputs
// and the whole chunk scratch poisoned with NaN first.

// TestDeltaNetChunkRule runs the chunked delta rule (deltanet_chunk_intra,
// _solve, _state) on normed inputs and a non-zero initial state against
// cpu.DeltaNetChunkedRef: one row, fewer than a chunk, one chunk, a chunk and
// one row, ragged and several chunks, under each numerics policy. Exact must
// have the CPU's bits; fast (float32 sums with fused multiply-adds, __expf)
// must be within 1e-5 relative of the outputs and of the state, a tenth of
// the 1e-4 that fast promises of a whole backbone's outputs (docs/MODEL.md
// "Numerics policy"), which stacks 48 such layers: the host emulation of the
// fast kernels against a float64 rule (docs/perf/chunk28-emu) finds them
// within about 1e-6 at these shapes. "tail" has key dims past a multiple of
// 4 over two 32-wide tiles (38; intra's tail loop, which 20 and 128 skip).
func TestDeltaNetChunkRule(t *testing.T) {
	r := newRand(t)
	tail := oddGeometry
	tail.LinKeyDim, tail.LinValueDim = 38, 40
	eachNumerics(t, func(t *testing.T) {
		for _, tc := range []struct {
			name string
			g    mixerShape
		}{{"full", fullGeometry}, {"odd", oddGeometry}, {"tail", tail}} {
			for _, n := range []int{1, 2, 63, 64, 65, 130, 300} {
				t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) { testDeltaNetChunkRule(t, r, tc.g, n) })
			}
		}
	})
}

func testDeltaNetChunkRule(t *testing.T, r *rand.Rand, g mixerShape, n int) {
	run, want, wantS := deltaNetChunkRuleCase(t, r, g, n)
	got, gotS := run()
	checkClose(t, "outputs", got, want, 1e-5)
	checkClose(t, "state", gotS, wantS, 1e-5)
	requireDeltaNetBits(t, "outputs", got, want) // under fast: the tolerance above again, the bits logged
	requireDeltaNetBits(t, "state", gotS, wantS)
}

// deltaNetChunkRuleCase uploads TestDeltaNetChunkRule's inputs for n rows of
// geometry g and returns run, the rule on the device from them and the
// initial state (afresh at each call: the outputs poisoned, the state
// uploaded again), and the CPU's outputs and final state.
func deltaNetChunkRuleCase(t *testing.T, r *rand.Rand, g mixerShape, n int) (run func() (got, gotS []float32), want, wantS []float32) {
	t.Helper()
	run, want, wantS, _ = deltaNetChunkRuleCaseLayer(t, r, g, n)
	return run, want, wantS
}

// deltaNetChunkRuleCaseLayer is deltaNetChunkRuleCase that also returns the
// layer run runs (its chunk scratch holds the last run's intermediates).
func deltaNetChunkRuleCaseLayer(t *testing.T, r *rand.Rand, g mixerShape, n int) (run func() (got, gotS []float32), want, wantS []float32, layer *DeltaNetLayer) {
	t.Helper()
	dg := deviceDeltaNetGeometry(&g)
	if !dg.chunkable() {
		t.Fatalf("geometry %+v does not take the chunked form", dg)
	}
	nk, nv, dk, dv := dg.KeyHeads, dg.ValueHeads, dg.KeyDim, dg.ValueDim
	ch := dg.Channels()
	// The conv output as the mixer feeds the rule: q and k L2-normed (q also
	// ·dk^-½), β in (0, 1), log decays in (−1.5, 0).
	conv := randNonZero(r, n*ch)
	for t0 := 0; t0 < n; t0++ {
		for h := 0; h < 2*nk; h++ {
			v := conv[t0*ch+h*dk:][:dk]
			var ss float64
			for _, x := range v {
				ss += float64(x) * float64(x)
			}
			s := 1 / math.Sqrt(ss)
			if h < nk {
				s /= math.Sqrt(float64(dk))
			}
			for i := range v {
				v[i] = float32(float64(v[i]) * s)
			}
		}
	}
	beta, decay := make([]float32, n*nv), make([]float32, n*nv)
	for i := range beta {
		beta[i] = float32(r.Float64())
		decay[i] = -1.5 * float32(r.Float64())
	}
	state := scaled(r, nv*dk*dv, 0.5)

	// Head-major copies for the device (row t of value head h at h·n + t).
	qn, kn := make([]float32, nv*n*dk), make([]float32, nv*n*dk)
	vv := make([]float32, nv*n*dv)
	bh, gh := make([]float32, nv*n), make([]float32, nv*n)
	for h := 0; h < nv; h++ {
		kh := h / (nv / nk)
		for t0 := 0; t0 < n; t0++ {
			row, hr := conv[t0*ch:], h*n+t0
			copy(qn[hr*dk:][:dk], row[kh*dk:])
			copy(kn[hr*dk:][:dk], row[(nk+kh)*dk:])
			copy(vv[hr*dv:][:dv], row[2*nk*dk+h*dv:])
			bh[hr], gh[hr] = beta[t0*nv+h], decay[t0*nv+h]
		}
	}
	layer = &DeltaNetLayer{G: dg, MaxRows: n}
	s := dg.chunkScratch(n)
	scratch := alloc(t, int(s.end))
	if err := dev.Fill32(scratch, nanBits); err != nil {
		t.Fatal(err)
	}
	for _, u := range []struct {
		off  int64
		data []float32
	}{{s.qn, qn}, {s.kn, kn}, {s.v, vv}, {s.beta, bh}, {s.decay, gh}} {
		if err := Upload(dev, scratch, u.off, u.data); err != nil {
			t.Fatal(err)
		}
	}
	layer.Scratch = Whole(scratch)
	run = func() ([]float32, []float32) {
		t.Helper()
		core := poisoned(t, n*nv*dv)
		st := upload(t, state)
		if err := dev.Run(func(q *Queue) error { return q.deltaNetChunkRule(layer, Whole(core), Whole(st), n) }); err != nil {
			t.Fatal(err)
		}
		return download(t, core, n*nv*dv), download(t, st, nv*dk*dv)
	}
	want = make([]float32, n*nv*dv)
	wantS = append([]float32(nil), state...)
	cpu.DeltaNetChunkedRef(want, conv, beta, decay, n, g.refGeometry(), wantS)
	return run, want, wantS, layer
}

// deltaNetPrefills are the kernels a DeltaNet layer can run a call of more
// than one row with, and how a layer running each is held to the CPU's bits
// (whose calls of more than one row run its chunked form): the chunked
// prefill must have them under the exact policy (checkBitsUnderExact); the
// row recurrence is another order of operations, its bits only logged.
var deltaNetPrefills = []struct {
	name      string
	prefill   DeltaNetPrefill
	checkBits func(t *testing.T, what string, got, want []float32)
}{{"row recurrence", DeltaNetRowPrefill, logDeltaNetBits}, {"chunked", DeltaNetChunkedPrefill, checkBitsUnderExact}}

// TestDeltaNetChunkedLayer runs calls of many rows and single steps through a
// DeltaNet layer (projections, the chunked form or the row recurrence,
// out_proj) on the device and the CPU (whose calls of more than one row run
// its chunked form) and compares every output and the final state: within
// 1e-4, and with the chunked prefill the CPU's bits under the exact policy.
// Both policies run (the fast chunk kernels, deltanet_chunk_prep_fast and
// _norm_fast included, whatever PROSCENIUM_TEST_NUMERICS says).
func TestDeltaNetChunkedLayer(t *testing.T) {
	r := newRand(t)
	eachNumerics(t, func(t *testing.T) { testDeltaNetChunkedLayer(t, r) })
}

func testDeltaNetChunkedLayer(t *testing.T, r *rand.Rand) {
	for _, tc := range []struct {
		name    string
		g       mixerShape
		stacked bool
	}{{"full", fullGeometry, true}, {"odd", oddGeometry, false}} {
		for _, p := range deltaNetPrefills {
			t.Run(tc.name+"/"+p.name, func(t *testing.T) {
				const maxRows = 300
				c := newDeltaNetCase(t, r, tc.g, maxRows, tc.stacked)
				c.layer.Step, c.layer.Prefill = DeltaNetSplitStep, p.prefill
				hid := tc.g.Hidden
				var ref cpu.DeltaNetRef
				x := alloc(t, maxRows*hid*4)
				for i, n := range []int{300, 1, 65, 2, 1, 130, 63, 64, 1} {
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
					p.checkBits(t, fmt.Sprintf("call %d (%d rows)", i, n), got, want)
				}
				dg := c.layer.G
				s := make([]float32, dg.ValueHeads*dg.KeyDim*dg.ValueDim)
				if err := Download(dev, s, c.layer.State.Block, 4*int64(dg.convStateFloats())); err != nil {
					t.Fatal(err)
				}
				checkClose(t, "recurrent state", s, ref.S(), 1e-4)
				p.checkBits(t, "recurrent state", s, ref.S())
			})
		}
	}
}

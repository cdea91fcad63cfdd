//go:build cuda

package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"proscenium/engine/cpu"
)

// Bit-for-bit tests of the DeltaNet mixer between its input projections and
// out_proj (kernels/deltanet.cu, kernels/deltanet_chunk.cu) against
// engine/cpu deltaNetMix under the backbone's numerics contract
// (docs/MODEL.md): random projected rows, the device's conv and recurrent
// state set to the CPU's before each call (so each call is judged on its
// own, not on an earlier call's rare rounding tie), then the outputs, the
// recurrent state and the conv state compared with ULPDiff.

// requireDeltaNetBits logs how many elements differ from the CPU's and by
// how many float32 steps at most, and fails beyond the contract's bound: at
// most one element in 10⁴ differs, by at most 4 steps (float64 sums in
// different orders round differently only at rare boundary ties).
// Under fast numerics it holds the relative tolerance 1e-5 instead (the
// bits only logged).
func requireDeltaNetBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	differ, maxULP := ULPDiff(got, want)
	t.Logf("%s: %d/%d differ, max %d ULP", what, differ, len(want), maxULP)
	if !dev.Numerics.Exact() {
		checkClose(t, what+" (fast numerics)", got, want, 1e-5)
		return
	}
	if differ*10000 > len(want) || maxULP > 4 {
		t.Errorf("%s: %d of %d elements differ from the CPU's bits, up to %d ULP (bound: 1 in 10⁴, 4 ULP)",
			what, differ, len(want), maxULP)
	}
}

// logDeltaNetBits logs ULPDiff's figures where the bits also depend on
// kernels outside the mixer (the projections' GEMV and GEMM).
func logDeltaNetBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	differ, maxULP := ULPDiff(got, want)
	t.Logf("%s: %d/%d differ from the CPU's bits, max %d ULP", what, differ, len(want), maxULP)
}

// deltaNetConvPerHead lays the CPU's conv state [K−1, channels] out as the
// device keeps it: [K−1][ValueHeads][2·KeyDim+ValueDim], each value head's q
// and k (of its key head) then its v (dn_channel in kernels/deltanet.cuh).
func deltaNetConvPerHead(g DeltaNetGeometry, conv []float32) []float32 {
	nk, nv, dk, dv, k := g.KeyHeads, g.ValueHeads, g.KeyDim, g.ValueDim, g.ConvKernel
	cw, ch := 2*dk+dv, g.Channels()
	out := make([]float32, (k-1)*nv*cw)
	for q := 0; q < k-1; q++ {
		for h := 0; h < nv; h++ {
			kh := h / (nv / nk)
			for c := 0; c < cw; c++ {
				gc := 2*nk*dk + h*dv + c - 2*dk
				switch {
				case c < dk:
					gc = kh*dk + c
				case c < 2*dk:
					gc = nk*dk + kh*dk + c - dk
				}
				out[(q*nv+h)*cw+c] = conv[q*ch+gc]
			}
		}
	}
	return out
}

// projectedRows is n random rows of the input projections' outputs: qkv
// [n, channels], z [n, ValueHeads·ValueDim], b and a [n, ValueHeads], and
// the same side by side as the device's scratch holds them (rows).
type projectedRows struct {
	qkv, z, b, a, rows []float32
}

func newProjectedRows(r *rand.Rand, g DeltaNetGeometry, n int) projectedRows {
	nv, vd, ch := g.ValueHeads, g.ValueHeads*g.ValueDim, g.Channels()
	p := projectedRows{qkv: randNonZero(r, n*ch), z: randNonZero(r, n*vd), b: scaled(r, n*nv, 3), a: scaled(r, n*nv, 3)}
	p.rows = make([]float32, 0, n*g.ProjWidth())
	for t := 0; t < n; t++ {
		p.rows = append(p.rows, p.qkv[t*ch:(t+1)*ch]...)
		p.rows = append(p.rows, p.z[t*vd:(t+1)*vd]...)
		p.rows = append(p.rows, p.b[t*nv:(t+1)*nv]...)
		p.rows = append(p.rows, p.a[t*nv:(t+1)*nv]...)
	}
	return p
}

// TestDeltaNetMixBits runs prefills of 1 to 200 rows (the chunked form for
// more than one row, around and across the 64-row chunk), steps after them
// (each one-row kernel) and short calls through the mixer on the device and
// the CPU, at Drama 3's geometry and the odd golden checkpoint's.
func TestDeltaNetMixBits(t *testing.T) { eachNumerics(t, testDeltaNetMixBitsAll) }

func testDeltaNetMixBitsAll(t *testing.T) {
	r := newRand(t)
	for _, tc := range mixerShapes {
		for _, st := range deltaNetSteps {
			t.Run(tc.name+"/"+st.name, func(t *testing.T) { testDeltaNetMixBits(t, r, tc.g, st.step) })
		}
	}
}

func testDeltaNetMixBits(t *testing.T, r *rand.Rand, g mixerShape, step DeltaNetStep) {
	const maxRows = 200
	c := newDeltaNetCase(t, r, g, maxRows, true)
	c.layer.Step, c.layer.Prefill = step, DeltaNetChunkedPrefill
	dg := c.layer.G
	vd := dg.ValueHeads * dg.ValueDim
	convFloats, sFloats := dg.convStateFloats(), dg.ValueHeads*dg.KeyDim*dg.ValueDim
	coreOff := c.layer.Scratch.Off + dg.scratchLayout(maxRows)
	var ref cpu.DeltaNetRef
	nans := make([]float32, maxRows*vd)
	for i := range nans {
		nans[i] = float32(math.NaN())
	}
	for i, n := range []int{1, 1, 2, 1, 5, 63, 1, 64, 1, 65, 1, 1, 3, 129, 1, 200, 1, 2} {
		p := newProjectedRows(r, dg, n)
		st := c.layer.State
		errs := []error{Upload(dev, c.layer.Scratch.Block, c.layer.Scratch.Off, p.rows),
			Upload(dev, c.layer.Scratch.Block, coreOff, nans[:n*vd])}
		if i > 0 { // the device starts each call from the CPU's state
			errs = append(errs, Upload(dev, st.Block, st.Off, deltaNetConvPerHead(dg, ref.Conv())),
				Upload(dev, st.Block, st.Off+4*int64(convFloats), ref.S()))
		}
		if err := firstErr(errs...); err != nil {
			t.Fatal(err)
		}
		if err := dev.Run(func(q *Queue) error { return q.deltaNetMix(&c.layer, n, n > 1) }); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, n*vd)
		cpu.DeltaNetMixRef(want, p.qkv, p.z, p.b, p.a, n, &c.ref, c.gref, &ref)
		if err := dev.Sync(); err != nil {
			t.Fatal(err)
		}
		got, gotConv, gotS := make([]float32, n*vd), make([]float32, convFloats), make([]float32, sFloats)
		if err := firstErr(Download(dev, got, c.layer.Scratch.Block, coreOff),
			Download(dev, gotConv, st.Block, st.Off), Download(dev, gotS, st.Block, st.Off+4*int64(convFloats))); err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("call %d (%d rows)", i, n)
		checkClose(t, what+" outputs", got, want, 1e-5)
		requireDeltaNetBits(t, what+" outputs", got, want)
		requireDeltaNetBits(t, what+" recurrent state", gotS, ref.S())
		requireDeltaNetBits(t, what+" conv state", gotConv, deltaNetConvPerHead(dg, ref.Conv()))
	}
}

// TestDeltaNetPromptPassBits splits a prompt of 129 rows into the backbone's
// prefill passes (64, 64, then one row) and compares them with the CPU's one
// call over all of them: the one-row pass continues the prompt, so it takes
// the chunked form as the CPU's last 1-row chunk does (Backbone.enqueue
// passes the flag the same way).
func TestDeltaNetPromptPassBits(t *testing.T) {
	r := newRand(t)
	for _, tc := range mixerShapes {
		t.Run(tc.name, func(t *testing.T) {
			const n, pass = 129, BackboneChunk
			c := newDeltaNetCase(t, r, tc.g, pass, true)
			dg := c.layer.G
			vd, pw, convFloats := dg.ValueHeads*dg.ValueDim, dg.ProjWidth(), dg.convStateFloats()
			p := newProjectedRows(r, dg, n)
			want := make([]float32, n*vd)
			var ref cpu.DeltaNetRef
			cpu.DeltaNetMixRef(want, p.qkv, p.z, p.b, p.a, n, &c.ref, c.gref, &ref)
			coreOff := c.layer.Scratch.Off + dg.scratchLayout(pass)
			got := make([]float32, n*vd)
			for s := 0; s < n; s += pass {
				m := min(pass, n-s)
				if err := Upload(dev, c.layer.Scratch.Block, c.layer.Scratch.Off, p.rows[s*pw:(s+m)*pw]); err != nil {
					t.Fatal(err)
				}
				if err := dev.Run(func(q *Queue) error { return q.deltaNetMix(&c.layer, m, m > 1 || s > 0) }); err != nil {
					t.Fatal(err)
				}
				if err := dev.Sync(); err != nil {
					t.Fatal(err)
				}
				if err := Download(dev, got[s*vd:(s+m)*vd], c.layer.Scratch.Block, coreOff); err != nil {
					t.Fatal(err)
				}
			}
			st := c.layer.State
			gotConv, gotS := make([]float32, convFloats), make([]float32, len(ref.S()))
			if err := firstErr(Download(dev, gotConv, st.Block, st.Off),
				Download(dev, gotS, st.Block, st.Off+4*int64(convFloats))); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "outputs", got, want, 1e-5)
			requireDeltaNetBits(t, "outputs", got, want)
			requireDeltaNetBits(t, "recurrent state", gotS, ref.S())
			requireDeltaNetBits(t, "conv state", gotConv, deltaNetConvPerHead(dg, ref.Conv()))
		})
	}
}

//go:build cuda

package cuda

import (
	"fmt"
	"testing"

	"proscenium/engine/drama3"
)

// TestDeltaNetChunkStateTiled runs the fast chunked rule (intra, solve,
// state) with each state kernel, deltanet_chunk_state_fast and dnstate34's
// deltanet_chunk_state_tiled, on the same inputs and initial state (those of
// TestDeltaNetChunkRule) at 1 … 700 rows: Drama 3's head dims (128/128), the
// odd golden checkpoint's (20/28), key dims past a multiple of 4 and of 16
// (38/40) and near the chunked form's bound 192 (190/36). Each must be within
// 1e-5 of the CPU's chunked form (the outputs and the final state), and the
// two within 1e-5 of each other.
func TestDeltaNetChunkStateTiled(t *testing.T) {
	r := newRand(t)
	prev, prevTiled := dev.Numerics, deltaNetStateTiled
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics, deltaNetStateTiled = prev, prevTiled }()
	rows := []int{1, 2, 63, 64, 65, 130, 300, 700}
	if testing.Short() {
		rows = []int{1, 65, 300}
	}
	for _, tc := range chunkKernelShapes() {
		for _, n := range rows {
			t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) {
				run, want, wantS := deltaNetChunkRuleCase(t, r, tc.g, n)
				deltaNetStateTiled = false
				simt, simtS := run()
				deltaNetStateTiled = true
				tiled, tiledS := run()
				if deltaNetStateTiledRefused.Load() {
					t.Fatal("the device refused deltanet_chunk_state_tiled's shared memory: the SIMT kernel ran twice")
				}
				checkClose(t, "simt outputs", simt, want, 1e-5)
				checkClose(t, "simt state", simtS, wantS, 1e-5)
				checkClose(t, "tiled outputs", tiled, want, 1e-5)
				checkClose(t, "tiled state", tiledS, wantS, 1e-5)
				checkClose(t, "tiled vs simt outputs", tiled, simt, 1e-5)
				checkClose(t, "tiled vs simt state", tiledS, simtS, 1e-5)
			})
		}
	}
}

// TestDeltaNetChunkStateTiming times the fast state pass alone with each
// kernel (deltanet_chunk_state_fast, deltanet_chunk_state_tiled) at Drama
// 3's geometry, 64 … 700 rows, in one process (µs a call, mean of 20).
func TestDeltaNetChunkStateTiming(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	r := newRand(t)
	prev, prevTiled := dev.Numerics, deltaNetStateTiled
	dev.Numerics = drama3.NumericsFast
	defer func() { dev.Numerics, deltaNetStateTiled = prev, prevTiled }()
	const maxRows, reps = 700, 20
	g := fullGeometry
	dg := deviceDeltaNetGeometry(&g)
	layer := DeltaNetLayer{G: dg, MaxRows: maxRows}
	// The state pass's inputs zero (its time does not depend on them: no
	// data-dependent branch, no subnormal).
	s := dg.chunkScratch(maxRows)
	scratch := alloc(t, int(s.end))
	if err := dev.Fill32(scratch, 0); err != nil {
		t.Fatal(err)
	}
	layer.Scratch = Whole(scratch)
	core := Whole(alloc(t, maxRows*dg.ValueHeads*dg.ValueDim*4))
	st := Whole(upload(t, scaled(r, dg.ValueHeads*dg.KeyDim*dg.ValueDim, 0.5)))
	for _, n := range []int{64, 300, 512, 700} {
		for _, tiled := range []bool{false, true} {
			deltaNetStateTiled = tiled
			name := map[bool]string{false: "simt ", true: "tiled"}[tiled]
			if err := dev.Run(func(q *Queue) error { return q.deltaNetChunkState(&layer, core, st, n) }); err != nil {
				t.Fatal(err)
			}
			ms, err := dev.Time(func(q *Queue) error {
				for i := 0; i < reps; i++ {
					if err := q.deltaNetChunkState(&layer, core, st, n); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			fmt.Printf("timing state %s %3d rows %9.1f µs\n", name, n, 1000*ms/reps)
		}
	}
	if deltaNetStateTiledRefused.Load() {
		t.Fatal("the device refused deltanet_chunk_state_tiled's shared memory: the SIMT kernel ran both times")
	}
}

// chunkKernelShape is a head geometry the chunked rule's kernel variants
// are tested on.
type chunkKernelShape struct {
	name string
	g    mixerShape
}

// chunkKernelShapes are Drama 3's head dims (128/128), the odd golden
// checkpoint's (20/28), key dims past a multiple of 4 and of 16 (38/40) and
// near the chunked form's bound 192 (190/36).
func chunkKernelShapes() []chunkKernelShape {
	tail, wide := oddGeometry, oddGeometry
	tail.LinKeyDim, tail.LinValueDim = 38, 40
	wide.LinKeyDim, wide.LinValueDim = 190, 36
	return []chunkKernelShape{{"full", fullGeometry}, {"odd", oddGeometry}, {"tail", tail}, {"wide", wide}}
}

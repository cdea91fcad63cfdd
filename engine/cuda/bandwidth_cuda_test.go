//go:build cuda

package cuda

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"testing"

	"proscenium/engine/checkpoint"
	"proscenium/engine/cpu"
)

// TestBandwidth measures each GEMV at Drama 3's shapes against a large
// device-to-device copy in the same run, and writes the figures as JSON to
// $PROSCENIUM_BANDWIDTH_JSON (the test is skipped without it). Timing: CUDA
// events around a batch of 64 launches, after a warm-up; the median of the
// batches. The launches form a dependent chain, as in a decode step: launch j
// reads its input x from what launch j−1 wrote (x's last 256 elements are
// the first 256 outputs of the launch before; the rest is fixed random data,
// which keeps the magnitudes steady), so with programmatic dependent launch
// each must still wait for the one before. Weights are random (|W·x| ≈ |x|),
// and every launch reads other weights (dense: the next of many copies of the
// matrix, 64 copies; experts: the next 8 of a shuffled set of 1024), so the
// 50 MB L2 cannot serve repeated reads: the reuse distance is 0.5 GB or more. After the
// graph timing, one more replay is checked launch by launch against
// engine/cpu (the outputs not read as inputs poisoned with NaN first).
func TestBandwidth(t *testing.T) {
	path := os.Getenv("PROSCENIUM_BANDWIDTH_JSON")
	if path == "" {
		t.Skip("set PROSCENIUM_BANDWIDTH_JSON=FILE to measure bandwidth")
	}
	const batches, perBatch = 21, 64
	// PROSCENIUM_BANDWIDTH_ONLY: a regular expression on SHAPE/TYPE/ACC/KERNEL
	// (ACC f32 or f64) selecting the instances to measure.
	var only *regexp.Regexp
	if e := os.Getenv("PROSCENIUM_BANDWIDTH_ONLY"); e != "" {
		var err error
		if only, err = regexp.Compile(e); err != nil {
			t.Fatalf("PROSCENIUM_BANDWIDTH_ONLY: %v", err)
		}
	}
	rep := bandwidthReport{Device: dev.Info}

	// The ceiling: a 1 GiB device-to-device copy, bytes read plus written.
	const copyBytes = 1 << 30
	src, dst := allocNoCleanup(t, copyBytes), allocNoCleanup(t, copyBytes)
	if err := dev.Fill32(src, 0x3f800001); err != nil {
		t.Fatal(err)
	}
	copyMs := median(t, batches, 10, func(q *Queue) error { return q.Copy(dst, src, copyBytes) })
	rep.Copy = figure{Bytes: 2 * copyBytes, Microseconds: copyMs * 1e3, GBps: 2 * copyBytes / (copyMs * 1e6)}
	floorMs := medianGraph(t, batches, perBatch, func(q *Queue) error { return q.LaunchFloor() }, nil)
	rep.LaunchFloorUs = floorMs * 1e3
	if err := dev.Free(src); err != nil {
		t.Fatal(err)
	}
	if err := dev.Free(dst); err != nil {
		t.Fatal(err)
	}

	r := rand.New(rand.NewPCG(1, 2))
	shapes := []struct {
		name                   string
		rows, cols, n, xstride int
		experts                bool
	}{
		{"2048→8192", 8192, 2048, 1, 0, false},
		{"4096→2048", 2048, 4096, 1, 0, false},
		{"8 experts 2048→512", 512, 2048, 8, 0, true},
		{"8 experts 512→2048", 2048, 512, 8, 512, true},
		{"fused 16 = 8 experts' gate+up 2048→512", 512, 2048, 16, 0, true},
	}
	for _, dtype := range []string{"bf16", "fp8"} {
		fp8 := dtype == "fp8"
		eb := 2
		if fp8 {
			eb = 1
		}
		for _, s := range shapes {
			matBytes := s.rows * s.cols * eb
			ns := FP8ScaleCount(s.rows, s.cols)
			// Matrices stored and the id sets launches walk through. The
			// stored matrices repeat a few distinct random ones (distinct
			// addresses are what defeats the L2).
			mats, distinct := perBatch, 1
			if s.experts {
				mats, distinct = 1024, 17
			}
			var ids []int32
			if s.experts {
				for _, v := range r.Perm(mats) {
					ids = append(ids, int32(v))
				}
			} else {
				for m := 0; m < mats; m++ {
					ids = append(ids, int32(m))
				}
			}
			sets := len(ids) / s.n
			W := allocNoCleanup(t, mats*matBytes)
			S := allocNoCleanup(t, mats*ns*4)
			ref := make([][]float32, distinct) // float32 weights of each distinct matrix
			amp := float32(math.Sqrt(3 / float64(s.cols)))
			for d := 0; d < distinct; d++ {
				var raw any
				if fp8 {
					codes := make([]uint8, s.rows*s.cols)
					for i := range codes {
						codes[i] = checkpoint.F32ToF8E4M3(float32(2*r.Float64() - 1))
					}
					scales := make([]float32, ns)
					for i := range scales {
						scales[i] = amp * float32(0.5+r.Float64())
					}
					ref[d] = checkpoint.DequantFP8Blocks(codes, s.rows, s.cols, scales, FP8Block)
					for m := d; m < mats; m += distinct {
						if err := Upload(dev, S, int64(m*ns*4), scales); err != nil {
							t.Fatal(err)
						}
					}
					raw = codes
				} else {
					h := make([]uint16, s.rows*s.cols)
					for i := range h {
						h[i] = checkpoint.F32ToBF16(amp * float32(2*r.Float64()-1))
					}
					ref[d] = bf16ToF32(h)
					raw = h
				}
				for m := d; m < mats; m += distinct {
					var err error
					if fp8 {
						err = Upload(dev, W, int64(m*matBytes), raw.([]uint8))
					} else {
						err = Upload(dev, W, int64(m*matBytes), raw.([]uint16))
					}
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			nx := s.cols
			if s.xstride > 0 {
				nx = (s.n-1)*s.xstride + s.cols
			}
			ny := s.n * s.rows
			// Slot j holds launch j's output at element nx−chained and the
			// fixed part of launch j+1's input before it.
			const chained = 256
			slotLen := nx - chained + ny
			slotsBlock := allocNoCleanup(t, perBatch*slotLen*4)
			fixed := randNonZero(r, nx-chained)
			for j := 0; j < perBatch; j++ {
				if err := Upload(dev, slotsBlock, int64(j*slotLen*4), append(append([]float32(nil), fixed...), randNonZero(r, ny)...)); err != nil {
					t.Fatal(err)
				}
			}
			slot := func(j int) (x, y *Block) {
				base := slotsBlock.Ptr + uintptr(j%perBatch*slotLen*4)
				return &Block{Kind: DeviceMem, Ptr: base, Bytes: int64(nx * 4)},
					&Block{Kind: DeviceMem, Ptr: base + uintptr((nx-chained)*4), Bytes: int64(ny * 4)}
			}
			idb := allocNoCleanup(t, 4*len(ids))
			if err := Upload(dev, idb, 0, ids); err != nil {
				t.Fatal(err)
			}
			bytes := s.n*(matBytes+s.rows*4) + nx*4
			if fp8 {
				bytes += s.n * ns * 4
			}
			idsReady := true // the ids come from the host (see Gemv.IdsReady)
			// The gemv of launch j (j counts launches; batches are multiples
			// of perBatch, so launch j of every batch and graph is the same).
			f64 := true           // the backbone's instances (Gemv.F64); the tower's for comparison
			var bits projULPTally // the f64 instance's outputs against cpu.MatVec
			gemvOf := func(j int, v GemvVariant) Gemv {
				g := Gemv{Rows: s.rows, Cols: s.cols, N: s.n, Mats: mats, XStride: s.xstride, Variant: v,
					Ids: idb, IdsOff: int64(4 * s.n * (j % perBatch % sets)), IdsReady: idsReady, F64: f64}
				if !s.experts { // one fixed matrix: the copy by offset, no ids
					m := j % perBatch % mats
					g.Ids, g.IdsOff, g.Mats = nil, 0, 1
					g.WOff, g.SOff = int64(m*matBytes), int64(m*ns*4)
				}
				return g
			}
			matsOf := func(j int) []int { // the stored matrices launch j applies
				g := gemvOf(j, GemvVariant{})
				if g.Ids == nil {
					return []int{j % perBatch % mats}
				}
				var ms []int
				for e := 0; e < s.n; e++ {
					ms = append(ms, int(ids[int(g.IdsOff/4)+e]))
				}
				return ms
			}
			check := func(t *testing.T, replay func() error) {
				before := download(t, slotsBlock, perBatch*slotLen)
				nan := make([]float32, ny-chained)
				for i := range nan {
					nan[i] = float32(math.NaN())
				}
				for j := 0; j < perBatch; j++ {
					if err := Upload(dev, slotsBlock, int64((j*slotLen+nx)*4), nan); err != nil {
						t.Fatal(err)
					}
				}
				if err := replay(); err != nil {
					t.Fatal(err)
				}
				after := download(t, slotsBlock, perBatch*slotLen)
				for j := 0; j < perBatch; j++ {
					in := after[(j-1+perBatch)%perBatch*slotLen:]
					if j == 0 {
						in = before[(perBatch-1)*slotLen:]
					}
					x := in[:nx]
					want := make([]float32, ny)
					for e, m := range matsOf(j) {
						cpu.MatVec(want[e*s.rows:(e+1)*s.rows], ref[m%distinct], x[e*s.xstride:e*s.xstride+s.cols], s.rows, s.cols)
					}
					got := after[j*slotLen+nx-chained : j*slotLen+nx-chained+ny]
					what := fmt.Sprintf("launch %d of the chain", j)
					checkCloseQuiet(t, what, got, want, 1e-5)
					if f64 {
						differ, maxULP := ULPDiff(got, want)
						bits.add(differ, len(got), maxULP)
						if maxULP > projMaxULP {
							t.Fatalf("%s: %d of %d differ from cpu.MatVec, by up to %d ULP", what, differ, len(got), maxULP)
						}
					}
				}
			}
			variants := GemvBF16Variants
			if fp8 {
				variants = GemvFP8Variants
			}
			before := oldChoice(fp8, s.cols, s.n)
			var runs []gemvInstance // every float64 instance; the float32 ones picked now and at e8000a9
			for _, v := range variants {
				runs = append(runs, gemvInstance{v, true})
			}
			for _, v := range variants {
				if v == before || v == ChooseGemv(fp8, s.rows, s.cols, s.n) { // the float32 instances
					runs = append(runs, gemvInstance{v, false})
				}
			}
			for _, run := range runs {
				v, acc := run.v, "f32"
				if run.f64 {
					acc = "f64"
				}
				if only != nil && !only.MatchString(s.name+"/"+dtype+"/"+acc+"/"+v.Name()) {
					continue
				}
				t.Run(s.name+"/"+dtype+"/"+acc+"/"+v.Name(), func(t *testing.T) {
					f64, bits = run.f64, projULPTally{}
					defer func() { t.Logf("bits against cpu.MatVec: %s", bits) }()
					j := 0
					launch := func(q *Queue) error {
						x, _ := slot(j - 1 + perBatch)
						_, y := slot(j)
						g := gemvOf(j, v)
						j++
						if fp8 {
							return q.GemvFP8(g, y, W, S, x)
						}
						return q.GemvBF16(g, y, W, x)
					}
					// Plain stream launches, then the same 64 launches as one graph.
					ms := median(t, batches, perBatch, launch)
					f := figure{Bytes: int64(bytes), Microseconds: ms * 1e3, GBps: float64(bytes) / (ms * 1e6)}
					gms := medianGraph(t, batches, perBatch, launch, check)
					// The contract's bound on the share of differing values
					// (float64 sums in another order round differently at
					// rare boundary coincidences) applies to all 64 launches'
					// outputs together: one launch's 8192 would allow none.
					if bits.differ*projDifferPer > bits.total {
						t.Errorf("%s differ from cpu.MatVec (contract: ≤ 1 in %d)", bits, projDifferPer)
					}
					gf := figure{Bytes: int64(bytes), Microseconds: gms * 1e3, GBps: float64(bytes) / (gms * 1e6)}
					chosen := run.f64 && v == ChooseGemvF64(fp8, s.rows, s.cols, s.n, nil)
					var nopdl *figure
					if chosen && dev.Info.PDL { // the same graph without programmatic dependent launch
						dev.SetPDL(false)
						ms := medianGraph(t, batches, perBatch, launch, nil)
						dev.SetPDL(true)
						nopdl = &figure{Bytes: int64(bytes), Microseconds: ms * 1e3, GBps: float64(bytes) / (ms * 1e6)}
					}
					var late *figure
					if chosen && s.experts { // ids as if the previous kernel wrote them: weights loaded after the wait
						idsReady = false
						ms := medianGraph(t, batches, perBatch, launch, nil)
						idsReady = true
						late = &figure{Bytes: int64(bytes), Microseconds: ms * 1e3, GBps: float64(bytes) / (ms * 1e6)}
					}
					rep.Gemv = append(rep.Gemv, gemvFigure{Shape: s.name, DType: dtype, Variant: v.Name(), Acc: acc,
						Stream: f, Graph: gf, OfCopy: gf.GBps / rep.Copy.GBps,
						BodyOfCopy: float64(bytes) / ((gms - floorMs) * 1e6) / rep.Copy.GBps,
						Chosen:     chosen, Before: v == before && !run.f64, GraphNoPDL: nopdl, GraphIdsLate: late})
				})
			}
			for _, b := range []*Block{W, S, slotsBlock, idb} {
				if err := dev.Free(b); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	fmt.Printf("copy 1 GiB D2D: %.1f µs, %.0f GB/s (read+write)\n", rep.Copy.Microseconds, rep.Copy.GBps)
	fmt.Printf("empty kernel from a graph: %.2f µs\n", rep.LaunchFloorUs)
	fmt.Printf("%-40s %-4s %-3s %-9s %9s %6s %9s %6s %7s %7s\n", "gemv", "type", "acc", "kernel", "stream µs", "GB/s", "graph µs", "GB/s", "of copy", "body")
	for _, g := range rep.Gemv {
		mark := ""
		if g.Chosen {
			mark = " *"
		}
		if g.Before {
			mark = " (before)"
		}
		if g.GraphNoPDL != nil {
			mark += fmt.Sprintf(" (no PDL: %.2f µs, %.1f%%)", g.GraphNoPDL.Microseconds, 100*g.GraphNoPDL.GBps/rep.Copy.GBps)
		}
		if g.GraphIdsLate != nil {
			mark += fmt.Sprintf(" (ids late: %.2f µs, %.1f%%)", g.GraphIdsLate.Microseconds, 100*g.GraphIdsLate.GBps/rep.Copy.GBps)
		}
		fmt.Printf("%-40s %-4s %-3s %-9s %9.2f %6.0f %9.2f %6.0f %6.1f%% %6.1f%%%s\n", g.Shape, g.DType, g.Acc, g.Variant,
			g.Stream.Microseconds, g.Stream.GBps, g.Graph.Microseconds, g.Graph.GBps, 100*g.OfCopy, 100*g.BodyOfCopy, mark)
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gemvInstance is one instance the bandwidth test measures.
type gemvInstance struct {
	v   GemvVariant
	f64 bool
}

// oldChoice is the kernel ChooseGemv picked at commit e8000a9, marked in the
// table for comparison.
func oldChoice(fp8 bool, cols, n int) GemvVariant {
	switch {
	case fp8 && cols <= 512:
		return GemvVariant{32, 8, 1}
	case fp8 && cols >= 4096:
		return GemvVariant{256, 4, 1}
	case fp8 && n > 1:
		return GemvVariant{64, 4, 2}
	case fp8:
		return GemvVariant{32, 4, 4}
	case cols <= 512:
		return GemvVariant{32, 4, 2}
	}
	return GemvVariant{128, 2, 2}
}

// allocNoCleanup allocates a block the caller frees (large blocks, freed
// before the next are taken).
func allocNoCleanup(t *testing.T, bytes int) *Block {
	t.Helper()
	b, err := dev.Alloc(int64(bytes))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkCloseQuiet is checkClose without the log line of a passing check.
func checkCloseQuiet(t *testing.T, what string, got, ref []float32, tol float64) {
	t.Helper()
	if rel := finiteRelErr(t, what, got, ref); !(rel <= tol) {
		t.Fatalf("%s: relative error %.3g > %.3g", what, rel, tol)
	}
}

type figure struct {
	Bytes        int64   `json:"bytes"`
	Microseconds float64 `json:"us"`
	GBps         float64 `json:"GBps"`
}

type gemvFigure struct {
	Shape   string  `json:"shape"`
	DType   string  `json:"dtype"`
	Variant string  `json:"variant"`
	Acc     string  `json:"acc"`     // f64: the backbone's instance (Gemv.F64); f32: the tower's
	Stream  figure  `json:"stream"`  // launched one by one
	Graph   figure  `json:"graph"`   // replayed from a captured graph
	OfCopy  float64 `json:"of_copy"` // graph bandwidth over the copy's
	// BodyOfCopy discounts the launch floor: bytes / (graph time − empty-kernel time).
	BodyOfCopy float64 `json:"body_of_copy"`
	Chosen     bool    `json:"chosen"` // the float64 instance ChooseGemv picks for this shape
	Before     bool    `json:"before"` // the float32 instance ChooseGemv picked at commit e8000a9
	GraphNoPDL *figure `json:"graph_no_pdl,omitempty"`
	// GraphIdsLate: the same graph with IdsReady false (experts' weights
	// loaded only after the PDL wait, as when the previous kernel writes the ids).
	GraphIdsLate *figure `json:"graph_ids_late,omitempty"`
}

type bandwidthReport struct {
	Device DeviceInfo `json:"device"`
	Copy   figure     `json:"copy"`
	// LaunchFloorUs is the time per empty kernel replayed from a graph.
	LaunchFloorUs float64      `json:"launch_floor_us"`
	Gemv          []gemvFigure `json:"gemv"`
}

// median runs perBatch enqueues between two events, batches times after two
// warm-up batches, and returns the median milliseconds per enqueue.
func median(t *testing.T, batches, perBatch int, enqueue func(q *Queue) error) float64 {
	t.Helper()
	return medianOf(t, batches, perBatch, func(q *Queue) error {
		for i := 0; i < perBatch; i++ {
			if err := enqueue(q); err != nil {
				return err
			}
		}
		return nil
	})
}

// medianGraph captures perBatch enqueues as one graph and times its replays;
// then check (if not nil) may replay it once more.
func medianGraph(t *testing.T, batches, perBatch int, enqueue func(q *Queue) error,
	check func(t *testing.T, replay func() error)) float64 {
	t.Helper()
	var g *Graph
	err := dev.Run(func(q *Queue) (err error) {
		g, err = q.Capture(func(q *Queue) error {
			for i := 0; i < perBatch; i++ {
				if err := enqueue(q); err != nil {
					return err
				}
			}
			return nil
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Run(func(*Queue) error { g.Destroy(); return nil })
	ms := medianOf(t, batches, perBatch, func(q *Queue) error { return q.LaunchGraph(g) })
	if check != nil {
		check(t, func() error { return dev.Run(func(q *Queue) error { return q.LaunchGraph(g) }) })
	}
	return ms
}

func medianOf(t *testing.T, batches, perBatch int, batch func(q *Queue) error) float64 {
	t.Helper()
	var times []float64
	for b := 0; b < batches+2; b++ {
		ms, err := dev.Time(batch)
		if err != nil {
			t.Fatal(err)
		}
		if b >= 2 {
			times = append(times, ms/float64(perBatch))
		}
	}
	sort.Float64s(times)
	return times[len(times)/2]
}

//go:build cuda

package cuda

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"testing"
)

// TestBandwidth measures each GEMV at Drama 3's shapes against a large
// device-to-device copy in the same run, and writes the figures as JSON to
// $PROSCENIUM_BANDWIDTH_JSON (the test is skipped without it). Timing: CUDA
// events around a batch of launches, after a warm-up; the median of the
// batches. Every launch reads other weights (dense: one of many copies;
// experts: the next 8 of a shuffled set of 1024), so the 50 MB L2 cannot serve
// repeated reads: the reuse distance is over 256 MB.
func TestBandwidth(t *testing.T) {
	path := os.Getenv("PROSCENIUM_BANDWIDTH_JSON")
	if path == "" {
		t.Skip("set PROSCENIUM_BANDWIDTH_JSON=FILE to measure bandwidth")
	}
	const batches, perBatch = 21, 64
	rep := bandwidthReport{Device: dev.Info}

	// The ceiling: a 1 GiB device-to-device copy, bytes read plus written.
	const copyBytes = 1 << 30
	src, dst := alloc(t, copyBytes), alloc(t, copyBytes)
	if err := dev.Fill32(src, 0x3f800001); err != nil {
		t.Fatal(err)
	}
	copyMs := median(t, batches, 10, func(q *Queue) error { return q.Copy(dst, src, copyBytes) })
	rep.Copy = figure{Bytes: 2 * copyBytes, Microseconds: copyMs * 1e3, GBps: 2 * copyBytes / (copyMs * 1e6)}
	floorMs := medianGraph(t, batches, perBatch, func(q *Queue) error { return q.LaunchFloor() })
	rep.LaunchFloorUs = floorMs * 1e3

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
	}
	for _, dtype := range []string{"bf16", "fp8"} {
		eb := 2
		if dtype == "fp8" {
			eb = 1
		}
		for _, s := range shapes {
			matBytes := s.rows * s.cols * eb
			// Matrices stored and the id sets launches walk through.
			mats := max(1, (512<<20)/matBytes)
			if s.experts {
				mats = 1024
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
			W := alloc(t, mats*matBytes)
			if err := dev.Fill32(W, 0x3c3c3c3c); err != nil { // finite in both bf16 and e4m3
				t.Fatal(err)
			}
			ns := FP8ScaleCount(s.rows, s.cols)
			S := alloc(t, mats*ns*4)
			if err := dev.Fill32(S, 0x3a83126f); err != nil { // 1e-3
				t.Fatal(err)
			}
			nx := s.cols
			if s.xstride > 0 {
				nx = (s.n-1)*s.xstride + s.cols
			}
			x := upload(t, randNonZero(r, nx))
			y := poisoned(t, s.n*s.rows)
			idb := upload(t, ids)
			bytes := s.n*(matBytes+s.rows*4) + nx*4
			if dtype == "fp8" {
				bytes += s.n * ns * 4
			}
			variants := GemvBF16Variants
			if dtype == "fp8" {
				variants = GemvFP8Variants
			}
			for _, v := range variants {
				j := 0
				launch := func(q *Queue) error {
					g := Gemv{Rows: s.rows, Cols: s.cols, N: s.n, Mats: mats, XStride: s.xstride, Variant: v,
						Ids: idb, IdsOff: int64(4 * s.n * (j % sets))}
					if !s.experts { // one fixed matrix: the copy by offset, no ids
						g.Ids, g.IdsOff, g.Mats = nil, 0, 1
						g.WOff, g.SOff = int64((j%mats)*matBytes), int64((j%mats)*ns*4)
					}
					j++
					if dtype == "fp8" {
						return q.GemvFP8(g, y, W, S, x)
					}
					return q.GemvBF16(g, y, W, x)
				}
				// Plain stream launches, then the same 64 launches as one graph.
				ms := median(t, batches, perBatch, launch)
				f := figure{Bytes: int64(bytes), Microseconds: ms * 1e3, GBps: float64(bytes) / (ms * 1e6)}
				gms := medianGraph(t, batches, perBatch, launch)
				gf := figure{Bytes: int64(bytes), Microseconds: gms * 1e3, GBps: float64(bytes) / (gms * 1e6)}
				chosen := v == ChooseGemv(dtype == "fp8", s.rows, s.cols, s.n)
				var nopdl *figure
				if chosen && dev.Info.PDL { // the same graph without programmatic dependent launch
					dev.SetPDL(false)
					ms := medianGraph(t, batches, perBatch, launch)
					dev.SetPDL(true)
					nopdl = &figure{Bytes: int64(bytes), Microseconds: ms * 1e3, GBps: float64(bytes) / (ms * 1e6)}
				}
				rep.Gemv = append(rep.Gemv, gemvFigure{Shape: s.name, DType: dtype, Variant: v.Name(),
					Stream: f, Graph: gf, OfCopy: gf.GBps / rep.Copy.GBps,
					BodyOfCopy: float64(bytes) / ((gms - floorMs) * 1e6) / rep.Copy.GBps,
					Chosen:     chosen, GraphNoPDL: nopdl})
			}
		}
	}
	fmt.Printf("copy 1 GiB D2D: %.1f µs, %.0f GB/s (read+write)\n", rep.Copy.Microseconds, rep.Copy.GBps)
	fmt.Printf("empty kernel from a graph: %.2f µs\n", rep.LaunchFloorUs)
	fmt.Printf("%-20s %-4s %-9s %9s %6s %9s %6s %7s %7s\n", "gemv", "type", "kernel", "stream µs", "GB/s", "graph µs", "GB/s", "of copy", "body")
	for _, g := range rep.Gemv {
		mark := ""
		if g.Chosen {
			mark = " *"
			if g.GraphNoPDL != nil {
				mark += fmt.Sprintf(" (no PDL: %.2f µs, %.1f%%)", g.GraphNoPDL.Microseconds, 100*g.GraphNoPDL.GBps/rep.Copy.GBps)
			}
		}
		fmt.Printf("%-20s %-4s %-9s %9.2f %6.0f %9.2f %6.0f %6.1f%% %6.1f%%%s\n", g.Shape, g.DType, g.Variant,
			g.Stream.Microseconds, g.Stream.GBps, g.Graph.Microseconds, g.Graph.GBps, 100*g.OfCopy, 100*g.BodyOfCopy, mark)
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
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
	Stream  figure  `json:"stream"`  // launched one by one
	Graph   figure  `json:"graph"`   // replayed from a captured graph
	OfCopy  float64 `json:"of_copy"` // graph bandwidth over the copy's
	// BodyOfCopy discounts the launch floor: bytes / (graph time − empty-kernel time).
	BodyOfCopy float64 `json:"body_of_copy"`
	Chosen     bool    `json:"chosen"` // the instance ChooseGemv picks for this shape
	GraphNoPDL *figure `json:"graph_no_pdl,omitempty"`
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

// medianGraph captures perBatch enqueues as one graph and times its replays.
func medianGraph(t *testing.T, batches, perBatch int, enqueue func(q *Queue) error) float64 {
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
	return medianOf(t, batches, perBatch, func(q *Queue) error { return q.LaunchGraph(g) })
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

package cuda

import (
	"errors"
	"fmt"
	"os"
)

// This file sizes and chooses the drawn codes' eh_proj tables (the device
// side is tower_drawn_eh_cuda.go). A residual tower layer after the first
// embeds the code the draw before it picks: eh_proj([enorm(E[c]);
// hnorm(h)]) = W_e·enorm(E[c]) + W_h·hnorm(h), and since eh_proj is linear
// the first term is a table T[c] made once per model, the second a
// projection of h_out that needs no code. So W_h·hnorm(h) runs beside the
// codebook head, before the draw, and after the draw only the attention
// norm (which adds T[c]) stands between the code and the layer's q/k/v:
// a launch and W_e's bytes (half of eh_proj's) leave a frame's path for
// each such layer. The layers that embed code 0 (the shared layers and the
// first residual one) run after that code's draw: by table (towerEH0) each
// reads W_h and a table row instead of all of eh_proj, and the first one's
// W_h·hnorm(h) runs beside the semantic head, before the draw (docs/PERF.md
// "eh0tab28"). No build tag: the memory plan (frames_bytes.go) counts the
// tables.

// towerEHMode is how a frame embeds drawn codes ($PROSCENIUM_GPU_TOWER_EH,
// read once: benchmarks compare them).
type towerEHMode int

const (
	towerEHMerged towerEHMode = iota // tables; the head and W_h in one launch (tower_gemv2_*): the default
	towerEHSplit                     // tables; the head and W_h as two GEMVs
	towerEHOff                       // no tables: the draw writes enorm(E[c]), eh_proj after it (before ehtab27)
)

func parseTowerEHMode(s string) (towerEHMode, error) {
	switch s {
	case "", "merged":
		return towerEHMerged, nil
	case "split":
		return towerEHSplit, nil
	case "off":
		return towerEHOff, nil
	}
	return 0, fmt.Errorf("PROSCENIUM_GPU_TOWER_EH=%q: want merged, split or off", s)
}

var towerEH = func() towerEHMode {
	m, err := parseTowerEHMode(os.Getenv("PROSCENIUM_GPU_TOWER_EH"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "proscenium-gpu:", err, "(using merged)")
	}
	return m
}()

// towerEH0Mode is how a frame embeds code 0 in the layers that embed it
// ($PROSCENIUM_GPU_TOWER_EH0, read once; no tables at all under
// towerEHOff).
type towerEH0Mode int

const (
	towerEH0Merged towerEH0Mode = iota // tables; the first layer's W_h·hnorm(h) before the semantic draw (beside the head where headAndHnorm merges): the default
	towerEH0After                      // tables; the first layer's W_h·hnorm(h) after the semantic draw, as the others'
	towerEH0Off                        // no code-0 tables: eh_proj whole (before eh0tab28)
)

func parseTowerEH0Mode(s string) (towerEH0Mode, error) {
	switch s {
	case "", "merged":
		return towerEH0Merged, nil
	case "after":
		return towerEH0After, nil
	case "off":
		return towerEH0Off, nil
	}
	return 0, fmt.Errorf("PROSCENIUM_GPU_TOWER_EH0=%q: want merged, after or off", s)
}

var towerEH0 = func() towerEH0Mode {
	m, err := parseTowerEH0Mode(os.Getenv("PROSCENIUM_GPU_TOWER_EH0"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "proscenium-gpu:", err, "(using merged)")
	}
	return m
}()

// towerCode0Layers are the tower layers (indices over the shared layers
// then the residual ones) that embed code 0: the shared layers and the
// first residual layer.
func towerCode0Layers(g TowerGeometry) []int {
	var ids []int
	for li := 0; li <= g.SharedLayers && li < g.SharedLayers+g.ResidualLayers(); li++ {
		ids = append(ids, li)
	}
	return ids
}

// towerDrawnLayers are the residual layers (indices into Residual) whose
// code a frame draws just before them: every one after the first
// (Residual[i] embeds codebook i, drawn after Residual[i−1]'s head).
func towerDrawnLayers(g TowerGeometry) []int {
	var ids []int
	for i := 1; i < g.ResidualLayers(); i++ {
		ids = append(ids, i)
	}
	return ids
}

// towerDrawnPlace is where drawn layer i's W_h (BF16 [Dim, Dim]) and table
// (float32 [Entries[i], Dim]) lie in the tables' block, 256-byte aligned.
type towerDrawnPlace struct{ wh, tab int64 }

// towerEHLayout is where the tables' block holds each table layer's W_h
// and T.
type towerEHLayout struct {
	drawn []towerDrawnPlace // by residual layer, as Tower.drawn (the drawn layers')
	code0 []towerDrawnPlace // by tower layer, as Tower.code0 (the code-0 layers'; nil under towerEH0Off)
	size  int64             // the block's bytes (0: no tables)
}

// towerDrawnEHLayout places every table layer's W_h and table in one block
// (none when mode is towerEHOff; no code-0 layer's when mode0 is
// towerEH0Off).
func towerDrawnEHLayout(g TowerGeometry, mode towerEHMode, mode0 towerEH0Mode) towerEHLayout {
	var l towerEHLayout
	if mode == towerEHOff {
		return l
	}
	D := int64(g.Dim)
	place := func(entries int) towerDrawnPlace {
		next := func(bytes int64) int64 {
			off := (l.size + 255) &^ 255
			l.size = off + bytes
			return off
		}
		wh := next(D * D * 2)
		return towerDrawnPlace{wh: wh, tab: next(int64(entries) * D * 4)}
	}
	l.drawn = make([]towerDrawnPlace, g.ResidualLayers())
	for _, i := range towerDrawnLayers(g) {
		l.drawn[i] = place(g.Entries[i])
	}
	if mode0 != towerEH0Off {
		l.code0 = make([]towerDrawnPlace, g.SharedLayers+1)
		for _, li := range towerCode0Layers(g) {
			l.code0[li] = place(g.Entries[0])
		}
	}
	return l
}

// TowerDrawnEHSkippedBytes is what the tables take off a frame's weight
// reads: the W_e half of each drawn layer's eh_proj (a table row read
// instead is Dim floats, as few as the codebook rows gathered).
func TowerDrawnEHSkippedBytes(g TowerGeometry) int64 {
	if towerEH == towerEHOff {
		return 0
	}
	layers := len(towerDrawnLayers(g))
	if towerEH0 != towerEH0Off {
		layers += len(towerCode0Layers(g))
	}
	return int64(layers) * int64(g.Dim) * int64(g.Dim) * 2
}

// TowerDrawnEHBytes is the tables' device memory (towerDrawnEHLayout's
// block: 344 MB at Drama 3's geometry, 134 MB of it the drawn layers'),
// which TowerTakesStateBytes and
// FramesPassBytes count. A load whose model would not fit the device whole
// with them leaves them out before any expert goes to host memory
// (FramesOptions.NoDrawnTables): the same bytes hold about two fifths of a
// layer's experts (806 MB at Drama 3's geometry), whose reads would
// otherwise cross the bus every step (a layer's ≈ 25 MB a step by the
// plan's arithmetic, two fifths of it ≈ 0.4 ms at PCIe 4.0's 25 GB/s,
// reasoned), against the 30–50 µs a frame the tables save (measured on the
// H200: the drawn layers' ≈ 19, docs/PERF.md "ehtab27"; the code-0 layers'
// 11–31, "Session 29").
func TowerDrawnEHBytes(g TowerGeometry) int64 {
	return towerDrawnEHLayout(g, towerEH, towerEH0).size
}

// WithoutDrawnTables is in less the tower's drawn-code tables: the tier's
// input once a plan with them did not fit the device whole.
func WithoutDrawnTables(in TierInput, g TowerGeometry) TierInput {
	in.ModelBytes -= TowerDrawnEHBytes(g)
	return in
}

// PlanTierTablesFirst is plan(in) with the tower's drawn-code tables the
// first bytes to give way: where the model would not fit the device whole
// with them (plan refuses with ErrDoesNotFit, or plans a tier other than
// TierDevice), it is the plan of in without them (WithoutDrawnTables), its
// NoDrawnTables set. LoadFrames, the synthetic backbone and the tier tests
// plan so (plan: Device.PlanTier, or PlanTier).
func PlanTierTablesFirst(in TierInput, g TowerGeometry, plan func(TierInput) (TierPlan, error)) (TierPlan, error) {
	p, err := plan(in)
	if err != nil && !errors.Is(err, ErrDoesNotFit) || err == nil && p.Tier == TierDevice {
		return p, err
	}
	if p, err = plan(WithoutDrawnTables(in, g)); err != nil {
		return p, err
	}
	p.NoDrawnTables = true
	return p, nil
}

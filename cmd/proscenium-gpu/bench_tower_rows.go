//go:build cuda

package main

import (
	"fmt"

	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// This file measures the tower frame of several takes at once
// (Tower.FrameRows: each weight read once for every take's row) on
// synthetic weights: `proscenium-gpu bench-tower -rows 1,2,4,8`.

// TowerRowsBench is bench-tower -rows' figures.
type TowerRowsBench struct {
	Device      string            `json:"device"`
	Geometry    string            `json:"geometry"`
	Settings    string            `json:"settings"`
	WeightBytes int64             `json:"weight_bytes"` // read per frame pass, whatever the takes
	PrefillRows int               `json:"prefill_rows"` // each take's cache rows before the frames
	Frames      int               `json:"frames"`       // timed per figure
	Rows        []TowerRowsFigure `json:"rows"`
}

// TowerRowsFigure is the frame of Takes takes.
type TowerRowsFigure struct {
	Takes     int     `json:"takes"`
	Gemvx     string  `json:"gemvx"`             // the B-row GEMVs' instance ("default": the one-row choice)
	FrameMs   float64 `json:"frame_graph_ms"`    // one frame of every take, replaying one captured graph
	PerTakeMs float64 `json:"ms_per_take_frame"` // FrameMs / Takes
	GBps      float64 `json:"weights_gb_per_s"`  // WeightBytes / FrameMs
	Launches  int     `json:"launches"`          // kernels in the frame graph
}

// benchTowerRows times FrameRows over n take slots for each n of rows: every
// slot prefilled prefill rows with the default sampled settings and its own
// seed, then frames frames per figure from the same cache row.
// Each figure is taken with each B-row GEMV instance of gemvx ("": the
// one-row choice; others where they split a row as it does).
func benchTowerRows(d *cuda.Device, cfg drama3.AudioConfig, prefill, frames int, rows []int, gemvx []string) (*TowerRowsBench, error) {
	most := 0
	for _, n := range rows {
		if n < 1 || n > cuda.TowerMaxTakes {
			return nil, fmt.Errorf("-rows %d: takes together are 1 to %d", n, cuda.TowerMaxTakes)
		}
		most = max(most, n)
	}
	st, err := newSyntheticTower(d, cfg)
	if err != nil {
		return nil, err
	}
	defer st.free(d)
	g, D := st.g, int64(st.g.Dim)
	const warm = 10
	tw, err := cuda.NewTower(d, &st.w, cuda.TowerOptions{MaxRows: prefill + warm + frames + 1, Takes: most})
	if err != nil {
		return nil, err
	}
	defer tw.Close()
	prompt, err := d.Alloc(int64(prefill) * D * 4)
	if err != nil {
		return nil, err
	}
	defer d.Free(prompt)
	hidden, err := d.Alloc(int64(most) * D * 4)
	if err != nil {
		return nil, err
	}
	defer d.Free(hidden)
	if err := firstError(fillHidden(d, prompt, int64(prefill)*D, 998), fillHidden(d, hidden, int64(most)*D, 999)); err != nil {
		return nil, err
	}
	sampled := sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30} // engine.DefaultSampling
	for s := 0; s < most; s++ {
		slot := tw.Slot(s)
		if err := slot.Begin(sampled, uint64(s+1)); err != nil {
			return nil, err
		}
		if err := d.Run(func(q *cuda.Queue) error { return slot.Prefill(q, cuda.Whole(prompt), prefill) }); err != nil {
			return nil, err
		}
	}
	res := &TowerRowsBench{Device: d.Info.Name, WeightBytes: st.perFrame, PrefillRows: prefill, Frames: frames,
		Settings: fmt.Sprintf("temperature %g, top_p %g, top_k %d", sampled.Temperature, sampled.TopP, sampled.TopK),
		Geometry: fmt.Sprintf("dim %d, %d/%d heads of %d, FFN %d, %d+%d layers, codebooks %v",
			g.Dim, g.Heads, g.KVHeads, g.HeadDim, g.FFN, g.SharedLayers, g.ResidualLayers(), g.Entries)}
	for _, name := range gemvx {
		v, err := cuda.ParseGemvRowsVariant(name)
		if err == nil {
			err = tw.SetRowsGemv(v)
		}
		if err != nil {
			return nil, err
		}
		if name == "" {
			name = "default"
		}
		if err := timeTowerRows(d, tw, res, hidden, prefill, frames, rows, name, sampled, st.perFrame); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// timeTowerRows adds the figures of every n of rows on tw's current B-row
// GEMV instance (name).
func timeTowerRows(d *cuda.Device, tw *cuda.Tower, res *TowerRowsBench, hidden *cuda.Block, prefill, frames int, rows []int, name string, sampled sampling.Settings, perFrame int64) error {
	const warm = 10
	for _, n := range rows {
		for s := 0; s < n; s++ {
			if err := tw.Slot(s).BeginAt(sampled, uint64(s+1), prefill); err != nil {
				return err
			}
		}
		var graph *cuda.Graph
		if err := d.Run(func(q *cuda.Queue) (err error) {
			graph, err = q.Capture(func(q *cuda.Queue) error { return tw.FrameRows(q, cuda.Whole(hidden), n, cuda.Tensor{}) })
			return err
		}); err != nil {
			return err
		}
		replay := func(count int) (float64, error) {
			return d.Time(func(q *cuda.Queue) error {
				for i := 0; i < count; i++ {
					if err := q.LaunchGraph(graph); err != nil {
						return err
					}
				}
				return nil
			})
		}
		_, err := replay(warm)
		var ms float64
		if err == nil {
			ms, err = replay(frames)
		}
		launches := graph.Kernels()
		d.Run(func(*cuda.Queue) error { graph.Destroy(); return nil })
		if err != nil {
			return err
		}
		for s := 0; s < n; s++ {
			r, err := tw.Slot(s).Result()
			if err == nil {
				err = r.Err()
			}
			if err != nil {
				return fmt.Errorf("%d takes, take %d: %w", n, s, err)
			}
		}
		ms /= float64(frames)
		res.Rows = append(res.Rows, TowerRowsFigure{Takes: n, Gemvx: name, FrameMs: ms, PerTakeMs: ms / float64(n),
			GBps: float64(perFrame) / (ms * 1e-3) / 1e9, Launches: launches})
	}
	return nil
}

// firstError is the first non-nil error.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

//go:build cuda

package main

import (
	"fmt"
	"math"

	"proscenium/engine/cuda"
	"proscenium/engine/cuda/kernel"
	"proscenium/engine/drama3"
	"proscenium/engine/sampling"
)

// This file measures the device tower per frame (semantic head, 13 layers,
// heads, draws, feedback row) on synthetic weights filled on the device:
// `proscenium-gpu bench-tower` runs it, docs/PERF.md records it.

// fullTowerConfig is the assumed full Drama 3 tower (docs/MODEL.md, the
// audio_decoder_config of engine/drama3/testdata/drama3_full_shaped.json):
// dim 2048, 16/2 heads of 128, FFN 6144, 4 shared + 9 residual layers.
func fullTowerConfig() drama3.AudioConfig {
	return drama3.AudioConfig{Dim: 2048, NumHeads: 16, NumKVHeads: 2, HeadDim: 128, IntermediateSize: 6144,
		NormEps: 1e-6, NumCodebooks: 10, CodebookSize: 1024, SemanticCodebookSize: 4096, SharedLayers: 4,
		RopeBase: 1e7, RotaryPercent: 0.5, BackboneCodebooks: 1}
}

// TowerBench is one benchmark's figures.
type TowerBench struct {
	Device       string  `json:"device"`
	Geometry     string  `json:"geometry"`
	WeightBytes  int64   `json:"weight_bytes"` // read per frame: tower, heads (the codebook rows gathered are few)
	PrefillRows  int     `json:"prefill_rows"`
	PrefillMs    float64 `json:"prefill_ms"`
	Frames       int     `json:"frames"`
	GraphMs      float64 `json:"frame_graph_ms"`        // per frame, replaying one captured graph
	LaunchMs     float64 `json:"frame_launches_ms"`     // per frame, the same launches enqueued one by one
	GraphFullMs  float64 `json:"frame_graph_full_ms"`   // per frame, top-p 1 and top-k 0 (full sorts)
	GraphGreedMs float64 `json:"frame_graph_greedy_ms"` // per frame, greedy
	LongRows     int     `json:"long_rows"`             // cache rows of the next figure
	GraphLongMs  float64 `json:"frame_graph_long_ms"`   // per frame, sampled settings, after LongRows rows
	ProjMs       float64 `json:"projections_ms"`        // the frame's GEMVs alone (and gate·up's SwiGLU), as a graph
	GBps         float64 `json:"weights_gb_per_s"`      // WeightBytes / GraphMs
	Sample4097Us float64 `json:"sample_4097_us"`        // one draw of the semantic head's size (sampled settings)
	Sample1024Us float64 `json:"sample_1024_us"`
	Settings     string  `json:"settings"`
	// ByGemv is the frame graph (first settings, from the same cache row as
	// GraphMs) with every projection on one GEMV instance, by name; "default"
	// is ChooseGemv's per shape.
	ByGemv []GemvFrame `json:"frame_graph_ms_by_gemv"`
	// Fusion is the launch sequence of the figures above (PROSCENIUM_GPU_TOWER
	// or the default); ByFusion the frame graph (first settings and greedy,
	// from the same cache row as GraphMs) with each sequence, all of them
	// timed once and then again.
	Fusion   string        `json:"fusion"`
	ByFusion []FusionFrame `json:"frame_graph_ms_by_fusion"`
}

// FusionFrame is one ByFusion figure.
type FusionFrame struct {
	Fusion   string  `json:"fusion"`
	Pass     int     `json:"pass"`
	Ms       float64 `json:"ms"`
	GreedyMs float64 `json:"greedy_ms"`
}

// GemvFrame is one ByGemv figure.
type GemvFrame struct {
	Variant string  `json:"variant"`
	Ms      float64 `json:"ms"`
}

// benchTower fills a tower of cfg's geometry with random weights in one
// arena block, prefills prefill text rows, then times frames of drawn codes.
// With profile it stops after the first figure, replaying one more frame
// graph inside a profiler range (cuda.Device.ProfileRange: ncu
// --profile-from-start off times each kernel of a frame).
func benchTower(d *cuda.Device, cfg drama3.AudioConfig, prefill, frames int, profile bool) (*TowerBench, error) {
	st, err := newSyntheticTower(d, cfg)
	if err != nil {
		return nil, err
	}
	defer st.free(d)
	g, w, perFrame := st.g, st.w, st.perFrame
	D := int64(g.Dim)
	hidden, err := d.Alloc(int64(prefill) * D * 4)
	if err != nil {
		return nil, err
	}
	defer d.Free(hidden)
	if err := fillHidden(d, hidden, int64(prefill)*D, 999); err != nil {
		return nil, err
	}

	warm, longRows := 10, 1000
	tw, err := cuda.NewTower(d, &w, cuda.TowerOptions{MaxRows: max(prefill+4*(frames+warm), longRows+frames+warm) + 1})
	if err != nil {
		return nil, err
	}
	defer tw.Close()
	sampled := sampling.Settings{Temperature: 1, TopP: 0.9, TopK: 30} // api.DefaultSampling
	if err := tw.Begin(sampled, 1); err != nil {
		return nil, err
	}
	res := &TowerBench{Device: d.Info.Name, Fusion: tw.Fusion(), WeightBytes: perFrame, PrefillRows: prefill, Frames: frames,
		Settings: fmt.Sprintf("temperature %g, top_p %g, top_k %d", sampled.Temperature, sampled.TopP, sampled.TopK),
		Geometry: fmt.Sprintf("dim %d, %d/%d heads of %d, FFN %d, %d+%d layers, codebooks %v",
			g.Dim, g.Heads, g.KVHeads, g.HeadDim, g.FFN, g.SharedLayers, g.ResidualLayers(), g.Entries)}
	if res.PrefillMs, err = d.Time(func(q *cuda.Queue) error { return tw.Prefill(q, cuda.Whole(hidden), prefill) }); err != nil {
		return nil, err
	}
	var graph *cuda.Graph
	if err := d.Run(func(q *cuda.Queue) (err error) {
		graph, err = q.Capture(func(q *cuda.Queue) error { return tw.Frame(q, cuda.Whole(hidden)) })
		return err
	}); err != nil {
		return nil, err
	}
	defer d.Run(func(*cuda.Queue) error { graph.Destroy(); return nil })
	perFrameMs := func(f func(q *cuda.Queue) error) (float64, error) {
		if _, err := d.Time(func(q *cuda.Queue) error { // warm up
			for i := 0; i < warm; i++ {
				if err := f(q); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return 0, err
		}
		ms, err := d.Time(func(q *cuda.Queue) error {
			for i := 0; i < frames; i++ {
				if err := f(q); err != nil {
					return err
				}
			}
			return nil
		})
		return ms / float64(frames), err
	}
	replay := func(q *cuda.Queue) error { return q.LaunchGraph(graph) }
	if res.GraphMs, err = perFrameMs(replay); err != nil {
		return nil, err
	}
	if profile {
		return res, d.ProfileRange(replay)
	}
	if res.LaunchMs, err = perFrameMs(func(q *cuda.Queue) error { return tw.Frame(q, cuda.Whole(hidden)) }); err != nil {
		return nil, err
	}
	// The same graph under other settings: only the control block changes.
	rows := prefill + 2*(frames+warm)
	for _, c := range []struct {
		s   sampling.Settings
		dst *float64
	}{{sampling.Settings{Temperature: 1, TopP: 1}, &res.GraphFullMs}, {sampling.Settings{TopP: 1}, &res.GraphGreedMs}} {
		if err := tw.BeginAt(c.s, 2, rows); err != nil {
			return nil, err
		}
		if *c.dst, err = perFrameMs(replay); err != nil {
			return nil, err
		}
		rows += frames + warm
	}
	// Sampled settings again after longRows rows (the cache filled with
	// random keys and values): attention's share grows with the take.
	res.LongRows = longRows
	if err := d.Run(func(q *cuda.Queue) error {
		return kernel.FillRandomF32(q, [3]int{1024, 1, 1}, 256, kernel.Ptr(tw.KV().Ptr), tw.KV().Bytes/4, 77, -1, 1)
	}); err != nil {
		return nil, err
	}
	if err := tw.BeginAt(sampled, 4, longRows); err != nil {
		return nil, err
	}
	if res.GraphLongMs, err = perFrameMs(replay); err != nil {
		return nil, err
	}
	r, err := tw.Result()
	if err != nil {
		return nil, err
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	res.GBps = float64(perFrame) / (res.GraphMs * 1e-3) / 1e9

	// The frame's projections alone, as a graph.
	var proj *cuda.Graph
	if err := d.Run(func(q *cuda.Queue) (err error) {
		proj, err = q.Capture(func(q *cuda.Queue) error { return tw.Projections(q, hidden) })
		return err
	}); err != nil {
		return nil, err
	}
	defer d.Run(func(*cuda.Queue) error { proj.Destroy(); return nil })
	if res.ProjMs, err = perFrameMs(func(q *cuda.Queue) error { return q.LaunchGraph(proj) }); err != nil {
		return nil, err
	}

	// The frame with each GEMV instance for every projection, from row
	// prefill again (attention's share the same as GraphMs's).
	variants := append([]*cuda.GemvVariant{nil}, func() (vs []*cuda.GemvVariant) {
		for i := range cuda.GemvBF16Variants {
			vs = append(vs, &cuda.GemvBF16Variants[i])
		}
		return vs
	}()...)
	for _, v := range variants {
		tw.SetGemv(v)
		if err := tw.BeginAt(sampled, 1, prefill); err != nil {
			return nil, err
		}
		var g *cuda.Graph
		if err := d.Run(func(q *cuda.Queue) (err error) {
			g, err = q.Capture(func(q *cuda.Queue) error { return tw.Frame(q, cuda.Whole(hidden)) })
			return err
		}); err != nil {
			return nil, err
		}
		ms, err := perFrameMs(func(q *cuda.Queue) error { return q.LaunchGraph(g) })
		d.Run(func(*cuda.Queue) error { g.Destroy(); return nil })
		if err != nil {
			return nil, err
		}
		name := "default"
		if v != nil {
			name = v.Name()
		}
		res.ByGemv = append(res.ByGemv, GemvFrame{name, ms})
	}
	tw.SetGemv(nil)

	// The frame with each launch sequence, from row prefill again, twice
	// over (the spread between passes is the figures' noise).
	fuse := tw.Fusion()
	for pass := 1; pass <= 2; pass++ {
		for _, f := range cuda.TowerFusions() {
			if err := tw.SetFusion(f); err != nil {
				return nil, err
			}
			var g *cuda.Graph
			if err := d.Run(func(q *cuda.Queue) (err error) {
				g, err = q.Capture(func(q *cuda.Queue) error { return tw.Frame(q, cuda.Whole(hidden)) })
				return err
			}); err != nil {
				return nil, err
			}
			ff := FusionFrame{Fusion: f, Pass: pass}
			for _, c := range []struct {
				s   sampling.Settings
				dst *float64
			}{{sampled, &ff.Ms}, {sampling.Settings{TopP: 1}, &ff.GreedyMs}} {
				err := tw.BeginAt(c.s, 1, prefill)
				if err == nil {
					*c.dst, err = perFrameMs(func(q *cuda.Queue) error { return q.LaunchGraph(g) })
				}
				if err != nil {
					d.Run(func(*cuda.Queue) error { g.Destroy(); return nil })
					return nil, err
				}
			}
			d.Run(func(*cuda.Queue) error { g.Destroy(); return nil })
			res.ByFusion = append(res.ByFusion, ff)
		}
	}
	if err := tw.SetFusion(fuse); err != nil {
		return nil, err
	}

	// The draws alone (sampled settings), 100 in a row.
	if err := tw.BeginAt(sampled, 3, 0); err != nil {
		return nil, err
	}
	for _, c := range []struct {
		n    int
		blk  *cuda.Block
		dst  *float64
		cb   int
		endI int
	}{{g.Entries[0] + 1, tw.Logits(0), &res.Sample4097Us, 0, g.Entries[0]}, {g.Entries[1], tw.Logits(1), &res.Sample1024Us, 1, -1}} {
		ms, err := d.Time(func(q *cuda.Queue) error {
			for i := 0; i < 100; i++ {
				if err := q.SampleLogits(c.blk, c.n, c.cb, c.endI, tw.Control()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		*c.dst = ms * 1e3 / 100
	}
	return res, nil
}

// syntheticTower is a tower of a geometry with random weights in one
// device block (benchTower, benchTowerRows).
type syntheticTower struct {
	g        cuda.TowerGeometry
	w        cuda.TowerTensors
	arena    *cuda.Block
	perFrame int64 // weight bytes a frame reads: tower, heads (the codebook rows gathered are few)
}

func (st *syntheticTower) free(d *cuda.Device) { d.Free(st.arena) }

// newSyntheticTower lays cfg's tower out in one block and fills it on the
// device.
func newSyntheticTower(d *cuda.Device, cfg drama3.AudioConfig) (*syntheticTower, error) {
	g, err := cuda.TowerGeometryOf(&cfg)
	if err != nil {
		return nil, err
	}
	D := int64(g.Dim)
	vocab := g.Entries[0] + 1000
	// Lay the tensors out in one block.
	var size int64
	place := func(bytes int64) cuda.Tensor {
		off := (size + 255) &^ 255
		size = off + bytes
		return cuda.Tensor{Off: off}
	}
	w := cuda.TowerTensors{Geometry: g, TextVocab: vocab}
	type fill struct {
		t      *cuda.Tensor
		n      int64
		bf16   bool
		lo, hi float32
	}
	var fills []fill
	mat := func(t *cuda.Tensor, rows, cols int64) {
		*t = place(rows * cols * 2)
		s := float32(1 / math.Sqrt(float64(cols)))
		fills = append(fills, fill{t, rows * cols, true, -s, s})
	}
	gain := func(t *cuda.Tensor) {
		*t = place(D * 4)
		fills = append(fills, fill{t, D, false, 0.5, 1.5})
	}
	var perFrame int64
	layer := func(l *cuda.TowerLayerTensors, headRows int) {
		for _, t := range []*cuda.Tensor{&l.ENorm, &l.HNorm, &l.AttentionNorm, &l.FFNNorm, &l.OutNorm} {
			gain(t)
		}
		hd := int64(g.HeadDim)
		mats := []struct {
			t          *cuda.Tensor
			rows, cols int64
		}{{&l.EHProj, D, 2 * D}, {&l.WQKV, int64(g.Heads+2*g.KVHeads) * hd, D}, {&l.WO, D, int64(g.Heads) * hd},
			{&l.W1, int64(g.FFN), D}, {&l.W3, int64(g.FFN), D}, {&l.W2, D, int64(g.FFN)}}
		if headRows > 0 {
			mats = append(mats, struct {
				t          *cuda.Tensor
				rows, cols int64
			}{&l.Head, int64(headRows), D})
		}
		for _, m := range mats {
			mat(m.t, m.rows, m.cols)
			perFrame += m.rows * m.cols * 2
		}
	}
	w.Codebooks = make([]cuda.Tensor, len(g.Entries))
	for i := range w.Codebooks {
		mat(&w.Codebooks[i], int64(g.Entries[i]), D)
	}
	w.Shared = make([]cuda.TowerLayerTensors, g.SharedLayers)
	w.Residual = make([]cuda.TowerLayerTensors, g.ResidualLayers())
	for i := range w.Shared {
		layer(&w.Shared[i], 0)
	}
	for i := range w.Residual {
		layer(&w.Residual[i], g.Entries[i+1])
	}
	mat(&w.SemanticHead, int64(g.Entries[0]+1), D)
	perFrame += int64(g.Entries[0]+1) * D * 2
	perFrame -= cuda.TowerDrawnEHSkippedBytes(g) // eh_proj's W_e halves a frame leaves to the tables
	mat(&w.TextEmbed, int64(vocab), D)
	for c := 0; c < g.Entries[0]; c++ {
		w.SemanticTokens = append(w.SemanticTokens, 7+c)
	}

	arena, err := d.Alloc(size)
	if err != nil {
		return nil, err
	}
	for _, f := range fills {
		f.t.Block = arena
	}
	if err := d.Run(func(q *cuda.Queue) error {
		for i, f := range fills {
			fill := kernel.FillRandomF32
			if f.bf16 {
				fill = kernel.FillRandomBF16
			}
			blocks := int(min((f.n+255)/256, 4096))
			if err := fill(q, [3]int{blocks, 1, 1}, 256, tensorPtr(*f.t), f.n, uint32(i+1), f.lo, f.hi); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		d.Free(arena)
		return nil, err
	}
	return &syntheticTower{g: g, w: w, arena: arena, perFrame: perFrame}, nil
}

// fillHidden fills n float32 values of b with uniform values in [−1, 1).
func fillHidden(d *cuda.Device, b *cuda.Block, n int64, seed uint32) error {
	return d.Run(func(q *cuda.Queue) error {
		return kernel.FillRandomF32(q, [3]int{64, 1, 1}, 256, kernel.Ptr(b.Ptr), n, seed, -1, 1)
	})
}

// tensorPtr is the device address of tensor t.
func tensorPtr(t cuda.Tensor) kernel.Ptr { return kernel.Ptr(t.Block.Ptr).Add(t.Off) }

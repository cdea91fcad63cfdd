//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"slices"
	"testing"
)

// TestGemmFastSpeed times every tensor-core GEMM instance on the full
// geometry's prefill shapes (skipped unless
// PROSCENIUM_GEMM_SPEED is set): the dense projections of 60, 300 and 700
// rows and the routed experts of as many rows grouped by expert (top 8 of
// 256, FP8). Each figure is the median over batches of launches between two
// events; a dense launch reads the next of four copies of its matrix, so L2
// holds no previous launch's weights. TFLOP/s counts 2·n·rows·cols useful
// flops (not the parts' extra MMAs), GB/s the weights read once (grouped: the
// experts the routing uses) plus X and Y. "*" marks ChooseGemmFast's pick;
// a line per n sums one layer's experts (gate·up and down) on the picks, in
// TB/s of expert weights. Every tile runs as it is; the tiles main's rule
// and gemm31's (gemmTiles31) pick also as each gemm31 variant (q:
// gemm_fast.go), and a line per shape and per n of experts compares them;
// the experts' tile also in each of gemm32's wide families (a "gemm32"
// line per shape and n, and per n for one layer). The figures are
// docs/PERF.md "Prefill GEMM core", "grouped28", "gemm31", "gemm32" and
// "f16p34" (an "f16p34" line per experts shape and n: each family with
// FP16 against BF16 parts, the picks with $PROSCENIUM_GPU_GEMM_F16 off and
// on; a line per n for one layer);
// a "dense33" line per dense shape and n times the split-K instance with
// each count (its partials summed in z order, dsplit34) against the default
// pick.
func TestGemmFastSpeed(t *testing.T) {
	if os.Getenv("PROSCENIUM_GEMM_SPEED") == "" {
		t.Skip("set PROSCENIUM_GEMM_SPEED=1 to time the tensor-core GEMMs")
	}
	const batches, perBatch, copies = 5, 8, 4
	r := newRand(t)
	withGemmSplit(t)
	var names []string
	for _, s := range gemmMmaBase {
		names = append(names, s.name())
	}
	// timed: the tiles, then the variants of the tiles main's rule and
	// gemm31's (PROSCENIUM_GPU_GEMM_TILES=31) pick.
	timed := func(n, rows, groups int) (ks, tiles []string) {
		defer func(r string) { gemmTiles = r }(gemmTiles)
		for _, r := range []string{"main", "31"} {
			gemmTiles = r
			if tile := chooseGemmTile(n, rows, groups).name(); !slices.Contains(tiles, tile) {
				tiles = append(tiles, tile)
			}
		}
		ks = append(ks, names...)
		for _, tile := range tiles {
			for _, v := range gemmVariants[1:] {
				ks = append(ks, tile+v)
			}
		}
		return ks, tiles
	}
	// compare logs each picked tile against its variants (× : main's
	// pick's time over this one's).
	compare := func(what string, tiles []string, ms map[string]float64) {
		for i, tile := range tiles {
			rule := "main's rule"
			if i > 0 {
				rule = "tiles 31"
			}
			line := fmt.Sprintf("gemm31 %s, %s: %s %.4f ms (%.2f×)", what, rule, tile, ms[tile], ms[tiles[0]]/ms[tile])
			for _, v := range gemmVariants[1:] {
				line += fmt.Sprintf(", %s %.4f (%.2f×)", v, ms[tile+v], ms[tiles[0]]/ms[tile+v])
			}
			t.Log(line)
		}
	}
	report := func(what, k string, g Gemm, ms float64, wbytes int64, chosen string) {
		flops := 2 * float64(g.N) * float64(g.Rows) * float64(g.Cols)
		bytes := float64(wbytes) + 4*float64(g.N)*float64(g.Cols+g.Rows)
		mark := ""
		if k == chosen {
			mark = " *"
		}
		t.Logf("gemm %s %s: %.4f ms, %.1f TFLOP/s, %.0f GB/s%s", what, k, ms, flops/(ms*1e9), bytes/(ms*1e6), mark)
	}
	const maxN = 700
	x := alloc(t, maxN*8*4096*4) // room for the experts' down inputs (pairs × 512) and every dense X
	y := alloc(t, maxN*8*2048*4) // the experts' gate·up and down outputs, every dense Y
	for _, s := range []struct {
		name       string
		rows, cols int
	}{
		{"deltanet in 2048→12352", 12352, 2048},
		{"attention qkv 2048→9216", 9216, 2048},
		{"out 4096→2048", 2048, 4096},
		{"router+shared 2048→1280", 1280, 2048},
		{"shared down 512→2048", 2048, 512},
	} {
		wbytes := int64(s.rows) * int64(s.cols) * 2
		W := alloc(t, int(wbytes)*copies)
		for _, n := range []int{60, 300, 700} {
			g := Gemm{N: n, Rows: s.rows, Cols: s.cols}
			chosen := ChooseGemmFast(n, s.rows, 0)
			ks, tiles := timed(n, s.rows, 0)
			times := map[string]float64{}
			for _, k := range ks {
				g.Kernel = k
				i := 0
				ms := median(t, batches, perBatch, func(q *Queue) error {
					i++
					return q.GemmBF16(g, Whole(y), Tensor{Block: W, Off: int64(i%copies) * wbytes}, Whole(x))
				})
				times[k] = ms
				report(fmt.Sprintf("%s n=%d", s.name, n), k, g, ms, wbytes, chosen)
			}
			compare(fmt.Sprintf("%s n=%d", s.name, n), tiles, times)
			// gemm32: where the default rule's tile is a split one, that
			// tile in each wide family ($PROSCENIUM_GPU_GEMM_DENSE_WIDE).
			saved := gemmTiles
			gemmTiles = ""
			tile := chooseGemmTile(n, s.rows, 0)
			gemmTiles = saved
			if tile.split && dev.Info.Major >= 9 {
				line := fmt.Sprintf("gemm32 dense %s n=%d: %s %.4f ms", s.name, n, tile.name(), times[tile.name()])
				for _, w := range gemmWides {
					g.Kernel = tile.name() + w
					i := 0
					ms := median(t, batches, perBatch, func(q *Queue) error {
						i++
						return q.GemmBF16(g, Whole(y), Tensor{Block: W, Off: int64(i%copies) * wbytes}, Whole(x))
					})
					report(fmt.Sprintf("%s n=%d", s.name, n), g.Kernel, g, ms, wbytes, chosen)
					line += fmt.Sprintf(", %s %.4f (%.2f×)", w, ms, times[tile.name()]/ms)
				}
				t.Log(line)
			}
			// dense33: the split-K instance with every count whose splits
			// run ≥ gemmSplitMinSteps steps (and fit the workspace),
			// against the default pick (× : the pick's time over the
			// split's), and the count gemmSplitFor chooses under "on".
			// Since dsplit34 the splits' partials are summed in z order by
			// each tile's last block (session 12 run 1 timed dense33's
			// atomic adds: out n=60 z16 0.0186 ms, router n=60 z8 0.0122).
			if steps := (s.cols + 31) / 32; steps >= 4*gemmSplitMinSteps {
				saved := gemmSplitK
				gemmSplitK = "on"
				rule := gemmSplitFor(n, s.rows, s.cols)
				gemmSplitK = saved
				pick := ChooseGemmFast(n, s.rows, 0)
				pickMs, ok := times[pick]
				if !ok {
					g.Kernel = pick
					i := 0
					pickMs = median(t, batches, perBatch, func(q *Queue) error {
						i++
						return q.GemmBF16(g, Whole(y), Tensor{Block: W, Off: int64(i%copies) * wbytes}, Whole(x))
					})
				}
				line := fmt.Sprintf("dense33 %s n=%d: pick %s %.4f ms", s.name, n, pick, pickMs)
				blocks := ((n + 63) / 64) * ((s.rows + 127) / 128)
				for z := 2; z <= gemmSplitMax && steps/z >= gemmSplitMinSteps && blocks*z <= gemmSplitTiles; z++ {
					k := gemmSplitTile
					k.splits = z
					g.Kernel = k.name()
					i := 0
					ms := median(t, batches, perBatch, func(q *Queue) error {
						i++
						return q.GemmBF16(g, Whole(y), Tensor{Block: W, Off: int64(i%copies) * wbytes}, Whole(x))
					})
					report(fmt.Sprintf("%s n=%d", s.name, n), g.Kernel, g, ms, wbytes, chosen)
					mark := ""
					if z == rule {
						mark = " <rule"
					}
					line += fmt.Sprintf(", z%d %.4f (%.2f×)%s", z, ms, pickMs/ms, mark)
					times[g.Kernel] = ms
				}
				t.Log(line)
			}
		}
	}

	// The routed experts: top 8 of 256 for each of n rows, sorted by expert.
	const E, K, P, H, I = 256, 8, 512, 2048, 512
	guW := alloc(t, E*2*P*H)
	guS := alloc(t, E*FP8ScaleCount(2*P, H)*4)
	dnW := alloc(t, E*H*I)
	dnS := alloc(t, E*FP8ScaleCount(H, I)*4)
	for _, n := range []int{60, 300, 700} {
		byExpert := make([][]int32, E)
		for tok := 0; tok < n; tok++ {
			for _, e := range distinctIDs(r, K, E) {
				byExpert[e] = append(byExpert[e], int32(tok))
			}
		}
		offsets := []int32{0}
		var rowIDs []int32
		used := 0
		for e := 0; e < E; e++ {
			rowIDs = append(rowIDs, byExpert[e]...)
			offsets = append(offsets, int32(len(rowIDs)))
			if len(byExpert[e]) > 0 {
				used++
			}
		}
		off, ids := Whole(upload(t, offsets)), Whole(upload(t, rowIDs))
		nk := n * K
		var layerMs float64
		var layerBytes int64
		variantMs := map[string]float64{} // one layer's experts on the picks' tiles as each variant
		wideMs := map[string]float64{}    // and in each of gemm32's wide families
		f16Ms := map[string]float64{}     // f16p34: in each of gemmF16Wides with FP16 parts
		f16BaseMs := map[string]float64{} // and with BF16 parts
		var f16PickMs [2]float64          // the picks with $PROSCENIUM_GPU_GEMM_F16 off, on
		gu := Gemm{N: nk, Rows: 2 * P, Cols: H, Groups: E, Offsets: off, RowIds: ids, XRows: n, MaxGroupRows: n, Mats: E}
		dn := Gemm{N: nk, Rows: H, Cols: I, Groups: E, Offsets: off, MaxGroupRows: n, Mats: E}
		for _, c := range []struct {
			what string
			g    Gemm
			W, S *Block
		}{{"experts gate·up 2048→1024", gu, guW, guS}, {"experts down 512→2048", dn, dnW, dnS}} {
			chosen := ChooseGemmFast(nk, c.g.Rows, E)
			wbytes := int64(used) * int64(c.g.Rows) * int64(c.g.Cols)
			ks, tiles := timed(nk, c.g.Rows, E)
			times := map[string]float64{}
			for _, k := range ks {
				c.g.Kernel = k
				ms := median(t, batches, perBatch, func(q *Queue) error {
					return q.GemmFP8(c.g, Whole(y), Whole(c.W), Whole(c.S), Whole(x))
				})
				times[k] = ms
				report(c.what+fmt.Sprintf(" n=%d (%d experts)", n, used), k, c.g, ms, wbytes, chosen)
				if k == chosen {
					layerMs += ms
					layerBytes += wbytes
				}
			}
			compare(c.what+fmt.Sprintf(" n=%d", n), tiles, times)
			for _, v := range gemmVariants {
				variantMs[v] += times[tiles[0]+v]
			}
			// gemm32: the grouped tile in each wide family (sm_90: the
			// families' shared memory), against the tile as it is.
			if dev.Info.Major >= 9 {
				line := fmt.Sprintf("gemm32 %s n=%d: %s %.4f ms", c.what, n, tiles[0], times[tiles[0]])
				for _, w := range gemmWides {
					k := tiles[0] + w
					c.g.Kernel = k
					ms := median(t, batches, perBatch, func(q *Queue) error {
						return q.GemmFP8(c.g, Whole(y), Whole(c.W), Whole(c.S), Whole(x))
					})
					report(c.what+fmt.Sprintf(" n=%d (%d experts)", n, used), k, c.g, ms, wbytes, chosen)
					wideMs[w] += ms
					times[k] = ms
					line += fmt.Sprintf(", %s %.4f (%.2f×)", w, ms, times[tiles[0]]/ms)
				}
				t.Log(line)
				// f16p34: the tile in each family compiled with FP16 parts
				// against the same with BF16 parts (× : BF16 / FP16), and
				// ChooseGemmFast's pick with $PROSCENIUM_GPU_GEMM_F16 off
				// and on.
				line = fmt.Sprintf("f16p34 %s n=%d:", c.what, n)
				for _, w := range gemmF16Wides {
					b := tiles[0] + w
					h := gemmMmaInstances[b]
					h.f16, h.parts = true, 2
					k := h.name()
					c.g.Kernel = k
					ms := median(t, batches, perBatch, func(q *Queue) error {
						return q.GemmFP8(c.g, Whole(y), Whole(c.W), Whole(c.S), Whole(x))
					})
					report(c.what+fmt.Sprintf(" n=%d (%d experts)", n, used), k, c.g, ms, wbytes, chosen)
					times[k] = ms
					f16Ms[w] += ms
					f16BaseMs[w] += times[b]
					line += fmt.Sprintf(" %s %.4f → %s %.4f (%.2f×);", b, times[b], k, ms, times[b]/ms)
				}
				saved := gemmF16
				for i, v := range []string{"off", "on"} {
					gemmF16 = v
					pick := ChooseGemmFast(nk, c.g.Rows, E)
					if _, ok := times[pick]; !ok {
						c.g.Kernel = pick
						times[pick] = median(t, batches, perBatch, func(q *Queue) error {
							return q.GemmFP8(c.g, Whole(y), Whole(c.W), Whole(c.S), Whole(x))
						})
					}
					f16PickMs[i] += times[pick]
					line += fmt.Sprintf(" pick %s %s %.4f", v, pick, times[pick])
				}
				gemmF16 = saved
				t.Log(line)
			}
		}
		// One layer's routed experts on ChooseGemmFast's instances, and the
		// 40 layers of a prefill of n rows (the weights dominate the bytes).
		t.Logf("experts n=%d, gate·up + down: %.4f ms a layer, %.2f TB/s of weights; %.1f ms for 40 layers",
			n, layerMs, float64(layerBytes)/(layerMs*1e9), 40*layerMs)
		for _, v := range gemmVariants {
			t.Logf("gemm31 experts n=%d, variant %q: %.4f ms a layer, %.2f TB/s; %.1f ms for 40 layers",
				n, v, variantMs[v], float64(layerBytes)/(variantMs[v]*1e9), 40*variantMs[v])
		}
		if len(wideMs) > 0 {
			line := fmt.Sprintf("gemm32 experts n=%d a layer: tile %.4f ms (%.2f TB/s)", n, variantMs[""],
				float64(layerBytes)/(variantMs[""]*1e9))
			for _, w := range gemmWides {
				ms := wideMs[w]
				line += fmt.Sprintf(", %s %.4f (%.2f×, %.2f TB/s)", w, ms, variantMs[""]/ms, float64(layerBytes)/(ms*1e9))
			}
			t.Log(line)
		}
		if len(f16Ms) > 0 {
			tb := func(ms float64) float64 { return float64(layerBytes) / (ms * 1e9) }
			line := fmt.Sprintf("f16p34 experts n=%d a layer:", n)
			for _, w := range gemmF16Wides {
				line += fmt.Sprintf(" %s BF16 parts %.4f ms, FP16 %.4f (%.2f×, %.2f TB/s);", w, f16BaseMs[w], f16Ms[w],
					f16BaseMs[w]/f16Ms[w], tb(f16Ms[w]))
			}
			line += fmt.Sprintf(" picks off %.4f (%.2f TB/s), on %.4f (%.2f×, %.2f TB/s; 40 layers %.1f → %.1f ms)",
				f16PickMs[0], tb(f16PickMs[0]), f16PickMs[1], f16PickMs[0]/f16PickMs[1], tb(f16PickMs[1]),
				40*f16PickMs[0], 40*f16PickMs[1])
			t.Log(line)
		}
	}
}

//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/cuda/kernel"
)

// This file makes and runs the eh_proj tables (tower_drawn_eh.go says why):
// NewTower splits each table layer's eh_proj into W_h and the table T; a
// frame projects W_h·hnorm(h) — for a drawn layer beside the codebook head
// before the draw, for a code-0 layer after the layer before it (the first
// beside the semantic head) — and adds T[c] in the attention norm.

// towerDrawnEH is a table layer's eh_proj in two parts: W_h (the hnorm
// columns of its eh_proj as a BF16 [Dim, Dim] matrix) and T (float32
// [Entries[i], Dim], T[c] = W_e·enorm(E_i[c]) for the codebook i it
// embeds: i for drawn residual layer i, 0 for a code-0 layer).
type towerDrawnEH struct {
	wh, tab  Tensor
	entries  int
	codeSlot int // the code's index in the control block: codebook i
}

// buildDrawnEH fills blk (the layout's bytes) with every table layer's W_h
// and T and points t.drawn and t.code0 at them. T's rows are eh_proj's GEMV
// (the one-row instance, float32 sums) of [enorm(E[c]); 0] — W_e's part of
// the sum a frame's eh_proj made — so a frame's x = T[c] + W_h·hnorm(h) is
// eh_proj's value within float32 rounding. Not inside Run.
func (t *Tower) buildDrawnEH(blk *Block, l towerEHLayout) error {
	g := &t.g
	drawn := make([]towerDrawnEH, len(l.drawn))
	code0 := make([]towerDrawnEH, len(l.code0))
	err := t.d.Run(func(q *Queue) error {
		for _, i := range towerDrawnLayers(*g) {
			if err := t.buildEHTable(q, blk, l.drawn[i], &t.w.Residual[i], i, &drawn[i]); err != nil {
				return err
			}
		}
		if l.code0 == nil {
			return nil
		}
		for _, li := range towerCode0Layers(*g) {
			if err := t.buildEHTable(q, blk, l.code0[li], t.layerTensors(li), 0, &code0[li]); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = t.d.Sync()
	}
	if err != nil {
		return fmt.Errorf("cuda tower: the eh_proj tables: %w", err)
	}
	t.drawn = drawn
	if l.code0 != nil {
		t.code0 = code0
	}
	return nil
}

// buildEHTable enqueues layer lw's W_h and T of codebook cb at p in blk
// (buildDrawnEH) and describes them in dr.
func (t *Tower) buildEHTable(q *Queue, blk *Block, p towerDrawnPlace, lw *TowerLayerTensors, cb int, dr *towerDrawnEH) error {
	g := &t.g
	D := g.Dim
	chunk := int(t.zeros.Bytes / 4) // rows of t.cat and of the multi-row GEMV's ids
	*dr = towerDrawnEH{wh: Tensor{Block: blk, Off: p.wh}, tab: Tensor{Block: blk, Off: p.tab}, entries: g.Entries[cb], codeSlot: cb}
	if err := kernel.BF16CopyCols(q, [3]int{D, 1, 1}, elementwiseThreads, tPtr(dr.wh), tPtr(lw.EHProj), 2*D, D, D); err != nil {
		return err
	}
	for c0 := 0; c0 < dr.entries; c0 += chunk {
		m := min(chunk, dr.entries-c0)
		if err := kernel.TowerEHTableRows(q, [3]int{m, 1, 1}, towerRowThreads, devPtr(t.cat), tPtr(t.w.Codebooks[cb]), c0, tPtr(lw.ENorm), D, g.Eps); err != nil {
			return err
		}
		gm := Gemv{Rows: D, Cols: 2 * D, N: m, Mats: 1, WOff: lw.EHProj.Off, Variant: ChooseGemv(false, D, 2*D, 1)}
		if m > 1 {
			gm.Ids, gm.IdsReady, gm.XStride = t.zeros, true, 2*D
		}
		if err := q.GemvBF16(gm, subBlock(blk, p.tab+int64(c0)*int64(D)*4, int64(m)*int64(D)*4), lw.EHProj.Block, t.cat); err != nil {
			return err
		}
	}
	return nil
}

// drawnEH is what residual layer i's eh_proj runs as: its tables, or nil
// (the first residual layer, a tower without tables).
func (t *Tower) drawnEH(i int) *towerDrawnEH {
	if i < 1 || i >= len(t.drawn) {
		return nil
	}
	return &t.drawn[i]
}

// code0EH is what tower layer li's eh_proj runs as when it embeds code 0:
// its tables, or nil (not a code-0 layer, no code-0 tables).
func (t *Tower) code0EH(li int) *towerDrawnEH {
	if li < 0 || li >= len(t.code0) {
		return nil
	}
	return &t.code0[li]
}

// headAndHnorm enqueues a head y = head·hx (headRows rows; hx is t.h,
// h_out, for a codebook head, the backbone's rows for the semantic head)
// and table layer dr's t.x = W_h·hnorm(h) (t.cat as [n, Dim] rows,
// tower_out_eh's emode 3 or hnormRows) for n rows: under towerEHMerged, one
// or two rows on the tower's default instances, one tower_gemv2 launch (a
// row's sums the same as that GEMV's); else two GEMVs, which from 3 rows
// measured as fast or faster on the B-row instances (docs/PERF.md
// "ehtab27": four takes 0.927 against 0.930 ms a frame, eight 1.289
// against 1.296).
func (t *Tower) headAndHnorm(q *Queue, byTake bool, head Tensor, headRows int, hx *Block, dr *towerDrawnEH, n int, y *Block) error {
	D := t.g.Dim
	if !t.mergesHeadAndHnorm(byTake, n) {
		if err := t.projectRows(q, byTake, dr.wh, D, D, n, t.cat, t.x); err != nil {
			return err
		}
		return t.projectRows(q, byTake, head, headRows, D, n, hx, y)
	}
	rows := int64(n)
	if err := firstErr(head.fits(int64(headRows)*int64(D)*2, "codebook head"), dr.wh.fits(int64(D)*int64(D)*2, "W_h"),
		checkFits(hx, 0, rows*int64(D)*4, "head x"), checkFits(t.cat, 0, rows*int64(D)*4, "W_h x"),
		checkFits(y, 0, rows*int64(headRows)*4, "head y"), checkFits(t.x, 0, rows*int64(D)*4, "W_h y")); err != nil {
		return fmt.Errorf("cuda tower: head and W_h: %w", err)
	}
	v, width := t.gemvVariant(D, D, 1), 1 // the head's too (ChooseGemv's BF16 split goes by columns); t.rowsVariant's at two rows
	ahead := b2i(gemvAhead[siteTower])
	if byTake {
		width, ahead = 2, 0 // rowsAhead: none below 4 rows
	}
	b1, _ := v.Grid(headRows)
	b2, _ := v.Grid(D)
	k := kernel.TowerGemv2Kernel(fmt.Sprintf("tower_gemv2_%sb%d", v.Name(), width))
	return kernel.TowerGemv2(q, k, [3]int{b1 + b2, 1, 1}, gemvThreads, devPtr(y), tPtr(head), devPtr(hx), headRows,
		devPtr(t.x), tPtr(dr.wh), devPtr(t.cat), D, n, D, ahead)
}

// mergesHeadAndHnorm says whether headAndHnorm runs one launch for n rows:
// under towerEHMerged, up to two rows, on the default instances (no test or
// benchmark override; kernels/tower.cu compiles tower_gemv2 for ChooseGemv's
// BF16 splits).
func (t *Tower) mergesHeadAndHnorm(byTake bool, n int) bool {
	v := t.gemvVariant(t.g.Dim, t.g.Dim, 1)
	return towerEH == towerEHMerged && t.gemv == nil && t.rowsGemv == nil && n <= 2 &&
		(v == GemvVariant{128, 2, 2} || v == GemvVariant{32, 4, 2})
}

// tableNorm enqueues tower_table_add_rmsnorm: t.x += T[c] of each row's
// drawn code (t.x holding W_h·hnorm(h) from headAndHnorm), t.normed =
// attention_norm(t.x).
func (t *Tower) tableNorm(q *Queue, dr *towerDrawnEH, w Tensor, n int, slots kernel.Ptr) error {
	return kernel.TowerTableAddRMSNorm(q, [3]int{n, 1, 1}, towerRowThreads, devPtr(t.normed), devPtr(t.x), tPtr(dr.tab),
		devPtr(t.ctrl), dr.codeSlot, dr.entries, tPtr(w), t.g.Dim, t.g.Eps, slots)
}

// hnormRows enqueues hnorm(h) of n rows (lw's gain) into t.cat as [n, Dim]
// rows (tower_eh_input without its embedding half): a code-0 table layer's
// W_h input where no out norm made it (the first layer, from the backbone's
// rows).
func (t *Tower) hnormRows(q *Queue, h kernel.Ptr, lw *TowerLayerTensors, n int) error {
	return kernel.TowerEHInput(q, [3]int{n, 1, 1}, towerRowThreads, devPtr(t.cat), h, 0, devPtr(t.ctrl), 0, 0, 0,
		tPtr(lw.HNorm), t.g.Dim, t.g.Eps, 0)
}

// drawTable is dr's table norm for the layer with attention norm gain w,
// done by the draw before it (sampleLogitsTable) where drawFoldsTable.
func (t *Tower) drawTable(dr *towerDrawnEH, w Tensor) *drawTable {
	return &drawTable{T: dr.tab, Entries: dr.entries, W: w, X: devPtr(t.x), Normed: devPtr(t.normed), Width: t.g.Dim, Eps: t.g.Eps}
}

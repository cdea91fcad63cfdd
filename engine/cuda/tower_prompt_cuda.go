//go:build cuda

package cuda

import (
	"fmt"

	"proscenium/engine/cuda/kernel"
)

// The tower's prompt rows as one batched pass (kernels/tower_prompt.cu). A
// prompt's reference frames are teacher-forced [assumption, docs/MODEL.md
// "Reference voices"]: the row before a reference frame is an audio row
// carrying that frame's codes, and since every code it embeds is known
// before its tower pass starts, it is a prefill row like a text row, with
// the frame's code embedded at each layer instead of the zero vector. So
// the prompt's text rows and forced rows go through each layer together,
// PrefillChunk rows at a time, with every projection one tensor-core GEMM
// over the rows; the forced rows' heads and draws are left out (no state
// depends on them: the prompt's frames are given, and the next take starts
// its frame counter at 0). The CPU reference runs the forced rows one
// frame at a time (engine/cpu backend_prompt.go); the caches they leave are
// the same rows.

// PromptRows enqueues the tower over n prompt rows at positions ctrl.pos…:
// hidden holds their backbone final-norm rows [n, Dim]; codes [n, cstride]
// int32 (device) row r's codes when it is forced to a reference frame (the
// codes of that frame, codebook c at column c, checked against the
// codebooks by the caller), or −1 in column 0 for a text row (its other
// columns are not read). The rows' keys and values land in every layer's
// cache and the row counter advances by n.
func (t *Tower) PromptRows(q *Queue, hidden Tensor, n int, codes Tensor, cstride int) error {
	g := &t.g
	D, S := g.Dim, g.SharedLayers
	switch {
	case n < 1:
		return fmt.Errorf("cuda tower: %d prompt rows", n)
	case cstride < len(g.Entries)-1:
		return fmt.Errorf("cuda tower: prompt codes of %d columns, the tower embeds %d codebooks", cstride, len(g.Entries)-1)
	}
	if err := firstErr(hidden.fits(int64(n)*int64(D)*4, "tower prompt hidden rows"),
		codes.fits(int64(n)*int64(cstride)*4, "tower prompt codes")); err != nil {
		return err
	}
	t.rowsGemm = true
	defer func() { t.rowsGemm = false }()
	for r := 0; r < n; r += t.opt.PrefillChunk {
		m := min(t.opt.PrefillChunk, n-r)
		h := tPtr(hidden.At(int64(r) * int64(D) * 4))
		rc := tPtr(codes.At(int64(r) * int64(cstride) * 4))
		for li := 0; li < t.layers(); li++ {
			// The shared layers embed codebook 0, residual layer j (li = S+j−1) codebook j−1.
			cb := max(0, li-S)
			lw := t.layerTensors(li)
			if err := kernel.TowerPromptEH(q, [3]int{m, 1, 1}, towerRowThreads, devPtr(t.cat), h, tPtr(t.w.Codebooks[cb]), rc,
				cstride, cb, tPtr(lw.ENorm), tPtr(lw.HNorm), D, g.Eps); err != nil {
				return err
			}
			if err := t.layer(q, li, m, ehInput{mode: ehMade}, nil, frameRows{}); err != nil {
				return err
			}
			h = devPtr(t.h)
		}
		if err := kernel.TowerAdvance(q, [3]int{1, 1, 1}, 32, devPtr(t.ctrl), m, 0); err != nil {
			return err
		}
	}
	return nil
}

// projectPromptRows is project for the n > 1 rows of PromptRows: one tensor-core
// GEMM reading W once for the rows (kernels/gemm.cu; BF16 parts of x, float32
// sums: the tower's GEMVs' accuracy), where the shapes allow it (columns a
// multiple of 8, W 16-byte aligned), else the GEMV.
func (t *Tower) projectPromptRows(q *Queue, W Tensor, rows, cols, n int, x, y *Block) (bool, error) {
	if cols%8 != 0 || W.addr()%16 != 0 {
		return false, nil
	}
	return true, q.GemmBF16(Gemm{N: n, Rows: rows, Cols: cols, Kernel: ChooseGemmFast(n, rows, 0)}, Whole(y), W, Whole(x))
}

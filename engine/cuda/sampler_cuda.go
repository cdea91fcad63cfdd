//go:build cuda

package cuda

import (
	"fmt"
	"os"

	"proscenium/engine/cuda/kernel"
)

// SampleMax is the most logits one device draw takes.
const SampleMax = kernel.SampleMax

// sampleKernel is the draw's kernel: sample_logits_lean (kernels/sampling.cu)
// selects a top-k ≤ 32 with warps and ends the draw in one warp, with few
// dependent loads and barriers on its path (the default since session 12's
// run 1: 12.0 → ≈ 9 µs a draw, the tower frame 0.789 → 0.758 ms;
// docs/PERF.md "tower33"). PROSCENIUM_GPU_SAMPLER picks another for
// comparisons: =pick sample_logits_warp_pick (the same codes, the older
// path), =warp sample_logits_warp (the same selection, the end by the whole
// block), =bisect sample_logits (bisection). All four equal the CPU sampler
// (TestSamplerMatchesCPU).
var sampleKernel = sampleKernelNamed(os.Getenv("PROSCENIUM_GPU_SAMPLER"))

func sampleKernelNamed(name string) string {
	switch name {
	case "bisect":
		return "sample_logits"
	case "warp":
		return "sample_logits_warp"
	case "pick":
		return "sample_logits_warp_pick"
	}
	return "sample_logits_lean"
}

// sampleKernels are the draw's kernels by name: one signature, so one call.
var sampleKernels = map[string]func(q kernel.Launcher, grid [3]int, block int, logits kernel.Ptr, n, cb, endIndex int,
	ctrl, out, etable kernel.Ptr, eentries int, enorm, edst kernel.Ptr, width int, eps float32, slots kernel.Ptr) error{
	"sample_logits":           kernel.SampleLogits,
	"sample_logits_warp":      kernel.SampleLogitsWarp,
	"sample_logits_warp_pick": kernel.SampleLogitsWarpPick,
	"sample_logits_lean":      kernel.SampleLogitsLean,
}

// SampleLogits enqueues codebook cb's draw from n logits with the settings
// and frame index of the control block ctrl (kernels/sampling.cu: the CPU
// sampler's arithmetic and Philox uniform), writing ctrl's codes[cb] and,
// when endIndex ≥ 0, its end flag (code == endIndex).
func (q *Queue) SampleLogits(logits *Block, n, cb, endIndex int, ctrl *Block) error {
	return q.sampleLogits(logits, n, cb, endIndex, ctrl, nil, 1, nil, 0)
}

// drawEmbed is what a draw writes after its code: the next tower layer's
// embedding half of the eh_proj input, dst = enorm(Table[code]) (Table
// [Entries, Width] BF16, ENorm [Width] float32), the launch that would
// otherwise make it (tower_eh_input) saved.
type drawEmbed struct {
	Table, ENorm Tensor
	Entries      int
	Dst          kernel.Ptr // [Width] float32
	Width        int
	Eps          float32
}

// SampleBatch enqueues batch independent draws: vector b of the [batch, n]
// logits is drawn with frame index ctrl.frame+b and codebook cb, its code
// written to out[b] (int32); ctrl's codes are left alone. For tests and
// benchmarks of the sampler.
func (q *Queue) SampleBatch(logits *Block, n, cb, batch int, ctrl, out *Block) error {
	if err := checkFits(out, 0, int64(batch)*4, "sample out"); err != nil {
		return err
	}
	return q.sampleLogits(logits, n, cb, -1, ctrl, out, batch, nil, 0)
}

// sampleLogits enqueues the draws; emb (no end index: the end flag it
// would test is the semantic draw's) may ask for the next layer's embedding
// half. With out nil, batch draws are the frame rows of take slots 0…batch−1
// (kernels/sampling.cu): logits [batch, n], control blocks ctrl[batch],
// embeddings to emb.Dst + b·2·Width floats; row b's take is in slot
// slots[b] (int32 on the device; 0: slot b).
func (q *Queue) sampleLogits(logits *Block, n, cb, endIndex int, ctrl, out *Block, batch int, emb *drawEmbed, slots kernel.Ptr) error {
	if err := checkSample(logits, n, cb, ctrl, out == nil && slots == 0, batch); err != nil {
		return err
	}
	var table, enorm, dst kernel.Ptr
	entries, width, eps := 0, 0, float32(0)
	if emb != nil {
		if out != nil || endIndex >= 0 {
			return fmt.Errorf("cuda: sample: an embedding follows one frame's residual draw only")
		}
		if err := firstErr(emb.Table.fits(int64(emb.Entries)*int64(emb.Width)*2, "draw embedding table"),
			emb.ENorm.fits(int64(emb.Width)*4, "draw embedding norm")); err != nil {
			return err
		}
		table, enorm, dst, entries, width, eps = tPtr(emb.Table), tPtr(emb.ENorm), emb.Dst, emb.Entries, emb.Width, emb.Eps
	}
	launch, ok := sampleKernels[sampleKernel]
	if !ok {
		return fmt.Errorf("cuda: sample: no draw kernel %q", sampleKernel)
	}
	return launch(q, [3]int{batch, 1, 1}, kernel.SampleThreads, devPtr(logits), n, cb, endIndex, devPtr(ctrl), devPtr(out),
		table, entries, enorm, dst, width, eps, slots)
}

// drawNorm: a frame's draw that a table layer follows does that layer's
// table norm in its tail (sample_logits_lean_table: the lean draw, the
// default, only); $PROSCENIUM_GPU_DRAW_NORM=0 leaves it to the layer's
// tower_table_add_rmsnorm launch (docs/PERF.md "drawnorm28").
var drawNorm = os.Getenv("PROSCENIUM_GPU_DRAW_NORM") != "0"

// drawFoldsTable reports whether a frame's draws fold the next layer's
// table norm (drawNorm with the lean draw).
func drawFoldsTable() bool { return drawNorm && sampleKernel == "sample_logits_lean" }

// drawTable is the table norm a draw does after its code for the table
// layer after it (tower_table_add_rmsnorm's row): X += T[code] (X holding
// W_h·hnorm(h)), Normed = attention_norm(X) with gain W, row b of each at
// b·Width floats.
type drawTable struct {
	T         Tensor // float32 [Entries, Width]
	Entries   int
	W         Tensor // the layer's attention norm gain [Width]
	X, Normed kernel.Ptr
	Width     int
	Eps       float32
}

// sampleLogitsTable enqueues the frame rows' draws of codebook cb (as
// sampleLogits with out nil, batch rows, no embedding) with tab's table
// norm in their tail (sample_logits_lean_table). The caller checks
// drawFoldsTable.
func (q *Queue) sampleLogitsTable(logits *Block, n, cb, endIndex int, ctrl *Block, batch int, tab *drawTable, slots kernel.Ptr) error {
	if err := firstErr(checkSample(logits, n, cb, ctrl, slots == 0, batch),
		tab.T.fits(int64(tab.Entries)*int64(tab.Width)*4, "draw table"),
		tab.W.fits(int64(tab.Width)*4, "draw table norm")); err != nil {
		return err
	}
	return kernel.SampleLogitsLeanTable(q, [3]int{batch, 1, 1}, kernel.SampleThreads, devPtr(logits), n, cb, endIndex,
		devPtr(ctrl), tPtr(tab.T), tab.Entries, tPtr(tab.W), tab.X, tab.Normed, tab.Width, tab.Eps, slots)
}

// checkSample checks a draw's shape and its logits' and control blocks'
// room: batch vectors of n logits of codebook cb, one control block or, with
// perRow (frame rows of take slots 0…batch−1, Tower.FrameRows), batch of
// them.
func checkSample(logits *Block, n, cb int, ctrl *Block, perRow bool, batch int) error {
	if n < 1 || n > SampleMax || cb < 0 || cb >= frameMaxCodebooks || batch < 1 || batch > 65535 {
		return fmt.Errorf("cuda: sample: %d logits (at most %d), codebook %d, batch %d", n, SampleMax, cb, batch)
	}
	ctrlBytes := int64(frameCtrlWords * 4)
	if perRow {
		ctrlBytes *= int64(batch)
	}
	return firstErr(checkFits(logits, 0, int64(batch)*int64(n)*4, "sample logits"),
		checkFits(ctrl, 0, ctrlBytes, "sample control"))
}

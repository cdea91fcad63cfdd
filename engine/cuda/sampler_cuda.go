//go:build cuda

package cuda

import (
	"fmt"
	"os"
)

// SampleMax is the most logits one device draw takes (SAMPLE_MAX in
// kernels/sampling.cu).
const SampleMax = 8192

// sampleKernel is the draw's kernel: sample_logits_warp_pick selects a
// top-k ≤ 32 with warps and ends the draw in one warp (kernels/sampling.cu);
// PROSCENIUM_GPU_SAMPLER=warp picks sample_logits_warp (the same selection,
// the end by the whole block), =bisect sample_logits (bisection), for
// comparisons. All three equal the CPU sampler (TestSamplerMatchesCPU;
// timings in docs/PERF.md).
var sampleKernel = sampleKernelNamed(os.Getenv("PROSCENIUM_GPU_SAMPLER"))

func sampleKernelNamed(name string) string {
	switch name {
	case "bisect":
		return "sample_logits"
	case "warp":
		return "sample_logits_warp"
	}
	return "sample_logits_warp_pick"
}

// SampleLogits enqueues codebook cb's draw from n logits with the settings
// and frame index of the control block ctrl (kernels/sampling.cu: the CPU
// sampler's arithmetic and Philox uniform), writing ctrl's codes[cb] and,
// when endIndex ≥ 0, its end flag (code == endIndex).
func (q *Queue) SampleLogits(logits *Block, n, cb, endIndex int, ctrl *Block) error {
	return q.sampleLogits(logits, n, cb, endIndex, ctrl, nil, 1, nil)
}

// drawEmbed is what a draw writes after its code: the next tower layer's
// embedding half of the eh_proj input, dst = enorm(Table[code]) (Table
// [Entries, Width] BF16, ENorm [Width] float32), the launch that would
// otherwise make it (tower_eh_input) saved.
type drawEmbed struct {
	Table, ENorm Tensor
	Entries      int
	Dst          Arg // [Width] float32
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
	return q.sampleLogits(logits, n, cb, -1, ctrl, out, batch, nil)
}

// sampleLogits enqueues the draws; emb (one draw, no end index: the end
// flag it would test is the semantic draw's) may ask for the next layer's
// embedding half.
func (q *Queue) sampleLogits(logits *Block, n, cb, endIndex int, ctrl, out *Block, batch int, emb *drawEmbed) error {
	if n < 1 || n > SampleMax || cb < 0 || cb >= FrameMaxCodebooks || batch < 1 || batch > 65535 {
		return fmt.Errorf("cuda: sample: %d logits (at most %d), codebook %d, batch %d", n, SampleMax, cb, batch)
	}
	if err := firstErr(checkFits(logits, 0, int64(batch)*int64(n)*4, "sample logits"),
		checkFits(ctrl, 0, frameCtrlWords*4, "sample control")); err != nil {
		return err
	}
	outArg := NullArg
	if out != nil {
		outArg = PtrArg(out)
	}
	table, enorm, dst, entries, width, eps := NullArg, NullArg, NullArg, 0, 0, float32(0)
	if emb != nil {
		if out != nil || endIndex >= 0 {
			return fmt.Errorf("cuda: sample: an embedding follows one frame's residual draw only")
		}
		if err := firstErr(emb.Table.fits(int64(emb.Entries)*int64(emb.Width)*2, "draw embedding table"),
			emb.ENorm.fits(int64(emb.Width)*4, "draw embedding norm")); err != nil {
			return err
		}
		table, enorm, dst, entries, width, eps = tArg(emb.Table), tArg(emb.ENorm), emb.Dst, emb.Entries, emb.Width, emb.Eps
	}
	return q.Launch(sampleKernel, [3]int{batch, 1, 1}, 1024,
		PtrArg(logits), IntArg(n), IntArg(cb), IntArg(endIndex), PtrArg(ctrl), outArg,
		table, IntArg(entries), enorm, dst, IntArg(width), F32Arg(eps))
}

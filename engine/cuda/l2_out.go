package cuda

import "os"

// l2Out: with $PROSCENIUM_GPU_L2_OUT=1 the one-row and two-row DeltaNet
// cluster steps prefetch the layer's output projection into L2 (kernels
// common.cuh prefetch_l2_span) while their latency-bound recurrence runs,
// so that the projection after them streams from L2 (docs/PERF.md
// "route21"). Read when a step is captured.
var l2Out = os.Getenv("PROSCENIUM_GPU_L2_OUT") == "1"

// outPrefetch is the bytes a DeltaNet step asks L2 for under l2Out: the
// output projection [Hidden, ValueHeads·ValueDim] BF16 (none: zero).
func (l *DeltaNetLayer) outPrefetch() (Tensor, int64) {
	if !l2Out {
		return Tensor{}, 0
	}
	g := l.G
	return l.W.Out, int64(g.Hidden) * int64(g.ValueHeads*g.ValueDim) * 2
}

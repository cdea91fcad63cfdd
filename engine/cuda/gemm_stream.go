package cuda

import (
	"fmt"
	"math"
	"os"

	"proscenium/engine/cuda/kernel"
)

// The streamed grouped experts (kernels/gemm_stream.cu, docs/PERF.md
// "stream14"): a fast prefill pass's routed FP8 experts with each warp's W
// rows loaded from memory straight into its MMA registers, no shared-memory
// ring and no barriers, instead of gemm.cu's grouped tiles.

// GemmStreamEnv is the environment variable that turns the streamed experts
// on or off: "on" (or empty: gemmStreamDefault), "off" gemm.cu's grouped
// tiles, or 8, 16, 24, 32 an instance (pairs a pass) for every launch.
const GemmStreamEnv = "PROSCENIUM_GPU_GEMM_STREAM"

// gemmStreamDefault is the streamed experts' setting with the variable
// unset.
const gemmStreamDefault = "on"

// gemmStream is $PROSCENIUM_GPU_GEMM_STREAM.
var gemmStream = os.Getenv(GemmStreamEnv)

// gemmStreamInstances are the compiled instances by the pairs of a group
// one pass over its W rows takes (kernel.GemmStreamFP8Kernels' order).
var gemmStreamInstances = map[int]kernel.GemmStreamFP8Kernel{
	8: kernel.GemmStreamFP8N8, 16: kernel.GemmStreamFP8N16, 24: kernel.GemmStreamFP8N24, 32: kernel.GemmStreamFP8N32,
}

// GemmStreamSetting checks a value of $PROSCENIUM_GPU_GEMM_STREAM.
func GemmStreamSetting(v string) error {
	switch v {
	case "", "on", "off", "8", "16", "24", "32":
		return nil
	}
	return fmt.Errorf("cuda: %s=%q: want on, off, 8, 16, 24 or 32", GemmStreamEnv, v)
}

// ChooseGemmStream picks the streamed instance for pairs (row, expert)
// pairs over groups experts under setting v ("" the default), or ok false
// where the streamed kernels are off. A group's pairs past the instance's
// take further passes over the same W rows (from L2), so the pick covers
// most groups in one: the smallest instance of at least mean + 1.5·√mean
// pairs (the pairs of an expert are near binomial under near-uniform
// routing: 300 rows of top-8 over 256 experts, 9.4 ± 3.0, take 16; 700
// rows, 21.9 ± 4.6, take 32; 60 rows take 8).
func ChooseGemmStream(v string, pairs, groups int) (k kernel.GemmStreamFP8Kernel, ok bool) {
	if v == "" {
		v = gemmStreamDefault
	}
	switch v {
	case "off":
		return "", false
	case "on":
	default:
		var n int
		if _, err := fmt.Sscanf(v, "%d", &n); err == nil {
			k, ok = gemmStreamInstances[n]
		}
		return k, ok
	}
	mean := float64(pairs) / float64(max(groups, 1))
	want := mean + 1.5*math.Sqrt(mean)
	for _, n := range []int{8, 16, 24, 32} {
		if want <= float64(n) {
			return gemmStreamInstances[n], true
		}
	}
	return gemmStreamInstances[32], true
}

// GemmStreamScratchBytes is the scratch the streamed experts take for xrows
// X rows of cols columns: each row's two FP16 parts and its 128-column
// blocks' scales (kernels/gemm_stream.cu gemm_stream_prep).
func GemmStreamScratchBytes(xrows, cols int) int64 {
	nb := int64((cols + 127) / 128)
	return int64(xrows) * nb * (kernel.GemmStreamBlockBytes + 4)
}

// gemmStreamFits reports whether the streamed kernels take a grouped GEMM
// of these columns: whole 16-byte W pieces (cols a multiple of 16).
func gemmStreamFits(cols int) bool { return cols > 0 && cols%16 == 0 }

package cuda

import (
	"fmt"
	"os"

	"proscenium/engine/cuda/kernel"
)

// Which kernel runs a codec convolution (kernels/codec.cu; docs/PERF.md
// "codec24"): codec_conv_gemm, or for a convolution of one row tile
// codec_conv_gemm_deep, the same tiles and sums with a deeper ring of
// loads. Both give the same bits, so the choice is speed alone.

// CodecDeepEnv switches codec_conv_gemm_deep off (0; a measurement's
// switch); unset or 1, one-row-tile convolutions take it.
const CodecDeepEnv = "PROSCENIUM_GPU_CODEC_DEEP"

// codecDeepShared is codec_conv_gemm_deep's dynamic shared memory: its ring
// of A and W tiles.
const codecDeepShared = kernel.CgDeepStages * (kernel.CgBm + kernel.CgBn) * kernel.CgBk * 2

// codecDeepRing says whether a convolution of rows rows takes
// codec_conv_gemm_deep: one row tile (a post-module layer at a chunk's
// frames, the upsampler, the decoder's first convolutions, every
// convolution of the first frames), when on.
func codecDeepRing(rows int, on bool) bool { return on && rows <= kernel.CgBm }

// codecDeepOn reads CodecDeepEnv.
func codecDeepOn() (bool, error) {
	switch v := os.Getenv(CodecDeepEnv); v {
	case "", "1":
		return true, nil
	case "0":
		return false, nil
	default:
		return false, fmt.Errorf("%s=%q: want 0 or 1", CodecDeepEnv, v)
	}
}

package cuda

import (
	"fmt"
	"os"
	"strconv"

	"proscenium/engine/cuda/kernel"
)

// Which kernel runs a codec convolution: codec_conv_gemm, or one of the
// codec_conv_gemm_halo_m* instances, which hold a block's input rows in
// shared memory once for every tap (kernels/codec.cu; docs/PERF.md
// "codec24"). Both give the same bits, so the choice is speed alone.

// CodecHaloEnv overrides the choice (a measurement's switch): 0 never the
// halo kernels; 64, 128 or 256 that many rows a block wherever the
// convolution has taps and the block's shared memory fits an SM; unset or
// auto the rule (codecHaloRows).
const CodecHaloEnv = "PROSCENIUM_GPU_CODEC_HALO"

const (
	// codecHaloMinRows is the fewest rows a convolution takes the halo
	// kernels at: below it a chunk's few row tiles leave most SMs idle
	// whichever kernel runs (the first frames' chunks, the upsampler).
	codecHaloMinRows = 1024
	// codecHaloTwoBlocks is the shared memory a block may take for two
	// blocks an SM (the H100/H200's 228 KB an SM, 1 KB a block reserved).
	codecHaloTwoBlocks = 113 << 10
	// codecHaloMaxShared is the most dynamic shared memory a block may
	// take on sm_90.
	codecHaloMaxShared = 227 << 10
)

// codecHaloShared is the dynamic shared memory of a halo block of bm rows:
// its input rows (bm plus the taps' reach back) at cpad + CGH_PAD halves a
// row, and the W stages.
func codecHaloShared(bm, cpad, taps, dil int) int {
	return (bm+(taps-1)*dil)*(cpad+kernel.CghPad)*2 + kernel.CgStages*kernel.CgBn*kernel.CgBk*2
}

// codecHaloKernel is the instance of bm rows a block (64·WM).
func codecHaloKernel(bm int) kernel.CodecConvGemmHaloKernel {
	switch bm {
	case 64:
		return kernel.CodecConvGemmHaloM1
	case 128:
		return kernel.CodecConvGemmHaloM2
	}
	return kernel.CodecConvGemmHaloM4
}

// codecHaloNever is the override that keeps every convolution on
// codec_conv_gemm (CodecHaloEnv=0).
const codecHaloNever = -1

// codecHaloRows is the rows a block of the halo kernels takes for a
// convolution of rows × (taps · cpad) at dilation dil, or 0 for
// codec_conv_gemm. force is the override (codecHaloForce): 0 the rule,
// codecHaloNever, or 64/128/256: that size where it fits. The rule: convolutions with
// taps (a single tap reads each input once either way) of at least
// codecHaloMinRows rows, the largest block whose shared memory leaves room
// for two blocks an SM.
func codecHaloRows(rows, cpad, taps, dil, force int) int {
	if taps < 2 || force == codecHaloNever {
		return 0
	}
	if force > 0 {
		if codecHaloShared(force, cpad, taps, dil) > codecHaloMaxShared {
			return 0
		}
		return force
	}
	if rows < codecHaloMinRows {
		return 0
	}
	for _, bm := range []int{256, 128, 64} {
		if codecHaloShared(bm, cpad, taps, dil) <= codecHaloTwoBlocks {
			return bm
		}
	}
	return 0
}

// codecHaloForce reads CodecHaloEnv (codecHaloRows' force).
func codecHaloForce() (int, error) {
	v := os.Getenv(CodecHaloEnv)
	switch v {
	case "", "auto":
		return 0, nil
	case "0":
		return codecHaloNever, nil
	case "64", "128", "256":
		n, _ := strconv.Atoi(v)
		return n, nil
	}
	return 0, fmt.Errorf("%s=%q: want auto, 0, 64, 128 or 256", CodecHaloEnv, v)
}

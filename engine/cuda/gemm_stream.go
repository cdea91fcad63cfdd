package cuda

import (
	"fmt"
	"math"
	"os"

	"proscenium/engine/cuda/kernel"
)

// The streamed grouped experts (kernels/gemm_stream.cu, docs/PERF.md
// "stream14"): a fast prefill pass's routed FP8 experts with each warp's W
// rows loaded from memory straight into its MMA registers (no shared-memory
// ring for W; X a chunk at a time through shared memory), instead of
// gemm.cu's grouped tiles.

// GemmStreamEnv is the environment variable that turns the streamed experts
// on or off: "on" (or empty: gemmStreamDefault), "off" gemm.cu's grouped
// tiles, or an instance for every launch by its suffix (8c4, 16c2, 24c2,
// 32c1: pairs a pass and accumulator chains).
const GemmStreamEnv = "PROSCENIUM_GPU_GEMM_STREAM"

// gemmStreamDefault is the streamed experts' setting with the variable
// unset.
const gemmStreamDefault = "on"

// gemmStream is $PROSCENIUM_GPU_GEMM_STREAM.
var gemmStream = os.Getenv(GemmStreamEnv)

// GemmStreamSwiGLUEnv is the environment variable that says where the
// routed experts' down projection reads the gate·up rows through its prep
// (GemmStreamFP8SwiGLU: the SwiGLU made as X is split, no h): "on" every
// pass the streamed kernels take, "off" none, unset: passes of
// gemmStreamSwiGLUMinRows rows or more.
const GemmStreamSwiGLUEnv = "PROSCENIUM_GPU_GEMM_STREAM_SWIGLU"

// gemmStreamSwiGLU is $PROSCENIUM_GPU_GEMM_STREAM_SWIGLU.
var gemmStreamSwiGLU = os.Getenv(GemmStreamSwiGLUEnv)

// gemmStreamSwiGLUMinRows is the shortest pass the default fuses the SwiGLU
// into the prep for. Session 16 (runs 3 and 4, alternating in one
// process): 700-row prefills 0.39–0.53 ms faster, 300-row ones 0.46–0.54
// ms and 60-row ones 0.56–0.71 ms slower (docs/PERF.md "early16").
const gemmStreamSwiGLUMinRows = 512

// streamSwiGLU says whether a pass of n rows fuses the SwiGLU into the
// down projection's prep.
func streamSwiGLU(n int) bool {
	return gemmStreamSwiGLU == "on" || gemmStreamSwiGLU == "" && n >= gemmStreamSwiGLUMinRows
}

// GemmStreamSwiGLUSetting checks a value of $PROSCENIUM_GPU_GEMM_STREAM_SWIGLU.
func GemmStreamSwiGLUSetting(v string) error {
	switch v {
	case "", "on", "off":
		return nil
	}
	return fmt.Errorf("cuda: %s=%q: want on or off", GemmStreamSwiGLUEnv, v)
}

// gemmStreamNT is each instance's n-tiles: pairs a pass over its W rows / 8.
var gemmStreamNT = map[kernel.GemmStreamFP8Kernel]int{
	kernel.GemmStreamFP8N8c4: 1, kernel.GemmStreamFP8N16c2: 2, kernel.GemmStreamFP8N24c2: 3, kernel.GemmStreamFP8N32c1: 4,
}

// gemmStreamPick are the instances the rule picks from, fewest pairs a pass
// first.
var gemmStreamPick = []kernel.GemmStreamFP8Kernel{kernel.GemmStreamFP8N8c4, kernel.GemmStreamFP8N16c2,
	kernel.GemmStreamFP8N24c2, kernel.GemmStreamFP8N32c1}

// gemmStreamNamed is the instance a setting names by its suffix.
func gemmStreamNamed(v string) (kernel.GemmStreamFP8Kernel, bool) {
	k := kernel.GemmStreamFP8Kernel("gemm_stream_fp8_n" + v)
	if _, ok := gemmStreamNT[k]; !ok {
		return "", false
	}
	return k, true
}

// GemmStreamSetting checks a value of $PROSCENIUM_GPU_GEMM_STREAM.
func GemmStreamSetting(v string) error {
	if _, ok := gemmStreamNamed(v); ok || v == "" || v == "on" || v == "off" {
		return nil
	}
	return fmt.Errorf("cuda: %s=%q: want on, off, or an instance: 8c4, 16c2, 24c2, 32c1", GemmStreamEnv, v)
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
		return gemmStreamNamed(v)
	}
	mean := float64(pairs) / float64(max(groups, 1))
	want := mean + 1.5*math.Sqrt(mean)
	for _, k := range gemmStreamPick {
		if want <= float64(8*gemmStreamNT[k]) {
			return k, true
		}
	}
	return gemmStreamPick[len(gemmStreamPick)-1], true
}

// GemmStreamShared is the dynamic shared memory of a block of instance k:
// two buffers of a chunk's X parts and scales (kernels/gemm_stream.cu
// gemm_stream_body: R = 8·NT rows, GEMM_STREAM_CHUNK / NT steps a chunk).
func GemmStreamShared(k kernel.GemmStreamFP8Kernel) int {
	nt := gemmStreamNT[k]
	return 2 * 8 * nt * (kernel.GemmStreamChunk / nt) * (kernel.GemmStreamBlockBytes + 4)
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

package cuda

import (
	"fmt"
	"math"
	"os"
	"strconv"

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

// GemmStreamSlabsEnv is the environment variable that sets the streamed
// experts' slabs of 128 W rows a block: 1, 2 or 4 for every GEMM that takes
// them, or empty for gemmStreamSlabsRule.
const GemmStreamSlabsEnv = "PROSCENIUM_GPU_GEMM_STREAM_SLABS"

// gemmStreamSlabs is $PROSCENIUM_GPU_GEMM_STREAM_SLABS.
var gemmStreamSlabs = os.Getenv(GemmStreamSlabsEnv)

// GemmStreamSwiGLUEnv is the environment variable that turns off ("off")
// the routed experts' down projection reading the gate·up rows through its
// prep (GemmStreamFP8SwiGLU: the SwiGLU made as X is split, no h); unset or
// "on", it runs wherever the streamed kernels take the down projection.
const GemmStreamSwiGLUEnv = "PROSCENIUM_GPU_GEMM_STREAM_SWIGLU"

// gemmStreamSwiGLU is $PROSCENIUM_GPU_GEMM_STREAM_SWIGLU.
var gemmStreamSwiGLU = os.Getenv(GemmStreamSwiGLUEnv)

// GemmStreamSwiGLUSetting checks a value of $PROSCENIUM_GPU_GEMM_STREAM_SWIGLU.
func GemmStreamSwiGLUSetting(v string) error {
	switch v {
	case "", "on", "off":
		return nil
	}
	return fmt.Errorf("cuda: %s=%q: want on or off", GemmStreamSwiGLUEnv, v)
}

// gemmStreamShape is an instance's pairs a pass over its W rows (nt n-tiles
// of 8) and its slabs of 128 W rows a block (kernels/gemm_stream.cu RG).
type gemmStreamShape struct{ nt, slabs int }

// gemmStreamShapes is every instance's shape.
var gemmStreamShapes = map[kernel.GemmStreamFP8Kernel]gemmStreamShape{
	kernel.GemmStreamFP8N8c4: {1, 1}, kernel.GemmStreamFP8N16c2: {2, 1}, kernel.GemmStreamFP8N24c2: {3, 1}, kernel.GemmStreamFP8N32c1: {4, 1},
	kernel.GemmStreamFP8N8c4s2: {1, 2}, kernel.GemmStreamFP8N16c2s2: {2, 2}, kernel.GemmStreamFP8N24c2s2: {3, 2}, kernel.GemmStreamFP8N32c1s2: {4, 2},
	kernel.GemmStreamFP8N8c4s4: {1, 4}, kernel.GemmStreamFP8N16c2s4: {2, 4}, kernel.GemmStreamFP8N24c2s4: {3, 4}, kernel.GemmStreamFP8N32c1s4: {4, 4},
}

// gemmStreamPick are the one-slab instances the rule picks from, fewest
// pairs a pass first.
var gemmStreamPick = []kernel.GemmStreamFP8Kernel{kernel.GemmStreamFP8N8c4, kernel.GemmStreamFP8N16c2,
	kernel.GemmStreamFP8N24c2, kernel.GemmStreamFP8N32c1}

// gemmStreamWithSlabs is the instance of k's pairs a pass with slabs slabs.
func gemmStreamWithSlabs(k kernel.GemmStreamFP8Kernel, slabs int) kernel.GemmStreamFP8Kernel {
	want := gemmStreamShape{gemmStreamShapes[k].nt, slabs}
	for _, c := range kernel.GemmStreamFP8Kernels {
		if gemmStreamShapes[c] == want {
			return c
		}
	}
	return k
}

// gemmStreamNamed is the instance a setting names by its suffix.
func gemmStreamNamed(v string) (kernel.GemmStreamFP8Kernel, bool) {
	k := kernel.GemmStreamFP8Kernel("gemm_stream_fp8_n" + v)
	if _, ok := gemmStreamShapes[k]; !ok {
		return "", false
	}
	return k, true
}

// GemmStreamSetting checks a value of $PROSCENIUM_GPU_GEMM_STREAM.
func GemmStreamSetting(v string) error {
	if _, ok := gemmStreamNamed(v); ok || v == "" || v == "on" || v == "off" {
		return nil
	}
	return fmt.Errorf("cuda: %s=%q: want on, off, or an instance: 8c4, 16c2, 24c2, 32c1, each with s2 or s4 (slabs) after it or not", GemmStreamEnv, v)
}

// GemmStreamSlabsSetting checks a value of $PROSCENIUM_GPU_GEMM_STREAM_SLABS.
func GemmStreamSlabsSetting(v string) error {
	switch v {
	case "", "1", "2", "4":
		return nil
	}
	return fmt.Errorf("cuda: %s=%q: want 1, 2 or 4 (slabs of 128 W rows a block), or unset for the rule", GemmStreamSlabsEnv, v)
}

// gemmStreamSlabsFit reports whether a block of slabs slabs takes W of rows
// × cols: one slab always; more where a row's 128-column steps are a
// multiple of the W ring's depth (the ring runs on from one slab into the
// next in step order) and the slabs hold whole rows of the matrix (no slab
// reads past it).
func gemmStreamSlabsFit(slabs, rows, cols int) bool {
	nb := (cols + 127) / 128
	return slabs == 1 || (slabs > 1 && nb%kernel.GemmStreamDepth == 0 && rows%(kernel.GemmStreamRows*slabs) == 0)
}

// gemmStreamSlabsRule is the slabs a block of instance k takes for W of
// rows × cols with the setting unset: 4 where they fit and a pass's X parts
// are one chunk (copied once and kept for every slab: the down projections
// of 60- and 300-row passes, 1.2× and 1.1× faster than one slab), else 1.
// Where X takes several chunks each slab copies them again, and the longer
// blocks lost to one slab in every case measured (the gate·up projections,
// the 700-row down; docs/PERF.md "slab16").
func gemmStreamSlabsRule(k kernel.GemmStreamFP8Kernel, rows, cols int) int {
	nt := gemmStreamShapes[k].nt
	nb, ck := (cols+127)/128, kernel.GemmStreamChunk/nt
	if nb <= ck && gemmStreamSlabsFit(4, rows, cols) {
		return 4
	}
	return 1
}

// ChooseGemmStream picks the streamed instance for pairs (row, expert)
// pairs over groups experts of W rows × cols under setting v ("" the
// default) and slabs setting sv, or ok false where the streamed kernels are
// off. A group's pairs past the instance's take further passes over the
// same W rows (from L2), so the pick covers most groups in one: the
// smallest instance of at least mean + 1.5·√mean pairs (the pairs of an
// expert are near binomial under near-uniform routing: 300 rows of top-8
// over 256 experts, 9.4 ± 3.0, take 16; 700 rows, 21.9 ± 4.6, take 32; 60
// rows take 8); then its slabs (sv, else gemmStreamSlabsRule), one where
// more do not fit W. A named instance keeps its slabs where they fit.
func ChooseGemmStream(v, sv string, pairs, groups, rows, cols int) (k kernel.GemmStreamFP8Kernel, ok bool) {
	if v == "" {
		v = gemmStreamDefault
	}
	switch v {
	case "off":
		return "", false
	case "on":
		k = gemmStreamPick[len(gemmStreamPick)-1]
		mean := float64(pairs) / float64(max(groups, 1))
		want := mean + 1.5*math.Sqrt(mean)
		for _, c := range gemmStreamPick {
			if want <= float64(8*gemmStreamShapes[c].nt) {
				k = c
				break
			}
		}
		slabs := gemmStreamSlabsRule(k, rows, cols)
		if n, err := strconv.Atoi(sv); err == nil {
			slabs = n
		}
		k = gemmStreamWithSlabs(k, slabs)
	default:
		if k, ok = gemmStreamNamed(v); !ok {
			return "", false
		}
	}
	if !gemmStreamSlabsFit(gemmStreamShapes[k].slabs, rows, cols) {
		k = gemmStreamWithSlabs(k, 1)
	}
	return k, true
}

// GemmStreamShared is the dynamic shared memory of a block of instance k:
// two buffers of a chunk's X parts and scales (kernels/gemm_stream.cu
// gemm_stream_body: R = 8·NT rows, GEMM_STREAM_CHUNK / NT steps a chunk).
func GemmStreamShared(k kernel.GemmStreamFP8Kernel) int {
	nt := gemmStreamShapes[k].nt
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

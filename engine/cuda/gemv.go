package cuda

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"proscenium/engine/cuda/kernel"
)

// GemvVariant is one compiled instance of a GEMV kernel (kernels/gemv.cu):
// groups of TPR threads share a row, each group computes Rows rows, Unroll
// 16-byte loads per thread and row are in flight at once.
type GemvVariant struct {
	TPR, Rows, Unroll int
}

// Name is the kernel name suffix, e.g. "t128r2u2".
func (v GemvVariant) Name() string { return fmt.Sprintf("t%dr%du%d", v.TPR, v.Rows, v.Unroll) }

const gemvThreads = kernel.GemvThreads

// GemvBF16Variants and GemvFP8Variants are the instances in kernels/gemv.cu.
var (
	GemvBF16Variants = []GemvVariant{{32, 1, 8}, {32, 2, 4}, {64, 2, 4}, {128, 2, 2}, {128, 4, 2}, {256, 2, 2}, {256, 4, 1},
		{32, 4, 2}, {32, 8, 2}, {128, 2, 4}}
	GemvFP8Variants = []GemvVariant{{32, 2, 2}, {32, 4, 2}, {64, 4, 2}, {128, 2, 2}, {128, 4, 1}, {256, 4, 1},
		{32, 4, 1}, {32, 8, 1}, {32, 4, 4}, {128, 4, 2}}
)

// Grid returns the blocks per matrix and the rows per block of a [rows, ·]
// projection: a block of 256 threads computes 256/TPR·Rows rows.
func (v GemvVariant) Grid(rows int) (blocks, rb int) {
	rb = gemvThreads / v.TPR * v.Rows
	return (rows + rb - 1) / rb, rb
}

// ChooseGemv picks the GEMV instance for a [rows, cols] projection applied
// to n matrices at once, from the bandwidth test on the H200 (docs/PERF.md,
// "CUDA kernels"). What matters most is that a thread's loads of a row are
// all useful and in flight at once: narrow rows (512 columns) want one warp per
// row group and several rows per warp, wider rows a row spread over more
// threads; FP8 launches of 8192 rows or more (one matrix, or the 16 gate and
// up matrices of 8 experts) a warp per 4 rows. $PROSCENIUM_GPU_GEMV_FP8 (an
// FP8 variant's name, t64r4u2) overrides it for every FP8 projection: the
// step's routed gate·up (benchmarks; a name that is no variant is ignored).
func ChooseGemv(fp8 bool, rows, cols, n int) GemvVariant {
	if fp8 && gemvFP8Default != "" {
		for _, v := range GemvFP8Variants {
			if v.Name() == gemvFP8Default {
				return v
			}
		}
	}
	switch {
	case fp8 && cols <= 512:
		return GemvVariant{32, 8, 1}
	case fp8 && cols >= 4096:
		return GemvVariant{256, 4, 1}
	case fp8 && n*rows < 8192:
		return GemvVariant{64, 4, 2}
	case fp8 && n*rows >= 16384 && n*rows <= 32768 && cols <= 2048:
		// The routed gate·up of 2 to 4 takes (16 or 32 matrices of 1024
		// rows): with sm_90's FP8 conversion a warp per 8 rows beats one
		// per 4 (session 22 run 3: the step 2.542 → 2.515 ms at 2 rows,
		// 3.377 → 3.345 at 4; at 1 and 8 rows slower).
		return GemvVariant{32, 8, 1}
	case fp8:
		return GemvVariant{32, 4, 4}
	case cols <= 512:
		return GemvVariant{32, 4, 2}
	}
	return GemvVariant{128, 2, 2}
}

// FP8Block is the side of the square blocks FP8 weights share one scale in.
const FP8Block = 128

// FP8ScaleCount is the number of float32 scales of one [rows, cols] block-FP8 matrix.
func FP8ScaleCount(rows, cols int) int {
	return ((rows + FP8Block - 1) / FP8Block) * ((cols + FP8Block - 1) / FP8Block)
}

// ChooseGemvF64 picks the instance of a float64 (backbone, Gemv.F64)
// projection: overrides (PROSCENIUM_GPU_GEMV64, see ParseGemvF64Overrides)
// by format and column count first, else the bandwidth test's fastest
// float64 instance at the nearest measured shape (docs/PERF.md "Numerics
// contract: speed"). The float64 sums move the optimum from the float32
// one (ChooseGemv) for BF16 only: a warp per 4 rows for one matrix of 2048
// columns and 4096 rows or more, 8 rows per block at 4096 columns or more.
func ChooseGemvF64(fp8 bool, rows, cols, n int, overrides map[string]GemvVariant) GemvVariant {
	format := "bf16"
	if fp8 {
		format = "fp8"
	}
	for _, key := range []string{fmt.Sprintf("%s:%d:%d", format, cols, n), fmt.Sprintf("%s:%d", format, cols), format} {
		if v, ok := overrides[key]; ok {
			return v
		}
	}
	switch {
	case fp8 || cols <= 512:
		return ChooseGemv(fp8, rows, cols, n)
	case cols >= 4096:
		return GemvVariant{128, 4, 2}
	case n == 1 && rows >= 4096:
		return GemvVariant{32, 4, 2}
	}
	return ChooseGemv(fp8, rows, cols, n)
}

// ParseGemvF64Overrides reads a comma-separated list of KEY=INSTANCE, KEY
// one of bf16, fp8, FORMAT:COLS, FORMAT:COLS:N, INSTANCE a variant name
// (t32r4u4) compiled in kernels/gemv.cu: the benchmark's way to time other
// choices without a rebuild.
func ParseGemvF64Overrides(s string) (map[string]GemvVariant, error) {
	out := map[string]GemvVariant{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, item := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("gemv override %q: want KEY=INSTANCE", item)
		}
		parts := strings.Split(key, ":")
		list := GemvBF16Variants
		switch {
		case parts[0] == "fp8":
			list = GemvFP8Variants
		case parts[0] != "bf16":
			return nil, fmt.Errorf("gemv override %q: format %q is not bf16 or fp8", item, parts[0])
		}
		if len(parts) > 3 {
			return nil, fmt.Errorf("gemv override %q: key is FORMAT[:COLS[:N]]", item)
		}
		for _, p := range parts[1:] {
			if n, err := strconv.Atoi(p); err != nil || n <= 0 {
				return nil, fmt.Errorf("gemv override %q: %q is not a positive count", item, p)
			}
		}
		found := false
		for _, v := range list {
			if v.Name() == val {
				out[key], found = v, true
			}
		}
		if !found {
			return nil, fmt.Errorf("gemv override %q: no %s instance %q", item, parts[0], val)
		}
	}
	return out, nil
}

// GemvRowsVariants are the instances of the projections of several rows
// with each weight read once (kernels/gemv.cu gemvx_*: the B-row step), each
// compiled for GemvRowsWidths rows at most.
var (
	GemvRowsVariants = []GemvVariant{{128, 2, 2}, {128, 4, 1}, {32, 4, 2}, {64, 4, 1}, {256, 4, 1}, {128, 4, 2}}
	GemvRowsWidths   = []int{2, 4, 8}
)

// gemvFP8Default is $PROSCENIUM_GPU_GEMV_FP8 (ChooseGemv).
var gemvFP8Default = os.Getenv("PROSCENIUM_GPU_GEMV_FP8")

// gemvRowsDefault is $PROSCENIUM_GPU_GEMVX: a variant name (t128r4u1) every
// several-row projection uses (benchmarks); empty: ChooseGemvRows's.
var gemvRowsDefault = os.Getenv("PROSCENIUM_GPU_GEMVX")

// ChooseGemvRows picks the instance of a [rows, cols] BF16 projection of
// nb > 1 rows, from TestGemvRowsBandwidth on the H200 (docs/PERF.md
// "Several takes in one step"): the more rows, the more each x chunk must be
// reused over weight rows (4 rows a group) and the fewer threads share a
// weight row, since every weight chunk is dotted with nb x chunks read from
// L1; wide launches (2048 columns, ≥ 4096 rows) take a warp per 4 rows from
// 4 rows on. $PROSCENIUM_GPU_GEMVX overrides it.
func ChooseGemvRows(rows, cols, nb int) GemvVariant {
	if gemvRowsDefault != "" {
		for _, v := range GemvRowsVariants {
			if v.Name() == gemvRowsDefault {
				return v
			}
		}
	}
	wide := gemvRowsWidth(nb) // the compiled width the launch runs
	switch {
	case wide >= 8 && cols <= 2048 && rows >= 4096:
		return GemvVariant{32, 4, 2}
	case wide >= 8:
		return GemvVariant{64, 4, 1}
	case cols >= 4096 && wide <= 2:
		return GemvVariant{256, 4, 1}
	case cols <= 512 || cols >= 4096:
		return GemvVariant{128, 4, 1}
	case rows < 4096:
		return GemvVariant{128, 2, 2}
	case wide >= 4:
		return GemvVariant{64, 4, 1}
	}
	return GemvVariant{128, 4, 1}
}

// GemvRowsMMA names the tensor-core instance of the several-row projection
// (kernels/gemv.cu gemvx_mma_bf16_fast: fast numerics, columns a multiple of
// 32; backboneGemvRows takes it where gemvRowsUseMMA says); it is not a SIMT
// variant (its fields are not a TPR/ROWS/UNROLL).
var GemvRowsMMA = GemvVariant{TPR: 0, Rows: 32, Unroll: 0}

// gemvRowsUseMMA says whether a fast projection of nb rows runs on the
// tensor cores: from 4 rows (the compiled width) for matrices of 8192 rows
// or more, where TestGemvRowsBandwidth measured it at 3.0–3.7 TB/s whatever
// the rows (12352 × 2048: 13.8 µs at 4 and 8 rows against the SIMT
// instances' 18.9 and 28.2 µs; 9216 × 2048: 12.3 against 16.6 and 27.2 µs);
// its grid has a block per 32 weight rows, too few for shorter matrices
// (2048 × 4096: 14.5 µs against 7.2 and 12.1). Columns must be a multiple of
// 32. $PROSCENIUM_GPU_GEMVX=mma takes it for every projection of 2 rows or
// more, =simt never (benchmarks).
func gemvRowsUseMMA(rows, cols, nb int) bool {
	if cols%32 != 0 || nb < 2 {
		return false
	}
	switch gemvRowsDefault {
	case "mma":
		return true
	case "simt":
		return false
	}
	return rows >= 8192 && gemvRowsWidth(nb) >= 4
}

// gemvRowsWidth is the compiled row count of an instance for nb rows: the
// least of GemvRowsWidths at or above nb (0: none).
func gemvRowsWidth(nb int) int {
	for _, w := range GemvRowsWidths {
		if nb <= w {
			return w
		}
	}
	return 0
}

// gemvSite is which of the model's one-matrix projections a GEMV is, for
// gemvAhead.
type gemvSite uint8

const (
	siteIn    gemvSite = iota // a mixer's input projections
	siteOut                   // a mixer's output projection
	siteDense                 // the MoE's dense projection (router, shared gate and up)
	siteTower                 // the tower's projections and heads
	siteOther                 // any other (never ahead)
	siteCount
)

// gemvSiteNames are the sites' names in $PROSCENIUM_GPU_GEMV_AHEAD.
var gemvSiteNames = [siteCount]string{"in", "out", "dense", "tower", ""}

// gemvAhead says at which sites the GEMVs load their first weights before
// the PDL wait (Gemv.WeightsAhead). Measured (docs/PERF.md "chain20"), the
// one-row step (2.064 ms without): the input projections 2.127, the output
// projections 2.040, the dense one 2.035, those two 2.018; the tower frame
// 0.761 → 0.746 ms. So by default the output, dense and tower ones.
// $PROSCENIUM_GPU_GEMV_AHEAD: "0" none, "1" all four, or a comma-separated
// list of in, out, dense, tower. Read when a graph is captured. The B-row
// step's and frame's SIMT projections follow the same sites from
// rowsAheadFrom rows on (GemvRows.WeightsAhead: the gemvxa_* instances).
var gemvAhead = parseGemvAhead(os.Getenv("PROSCENIUM_GPU_GEMV_AHEAD"))

// rowsAheadFrom is the fewest rows at which a site's B-row projections load
// their first weights ahead. Measured (docs/PERF.md "route21", the step in
// ms without → with): the output and dense projections lose at 2 and 4 rows
// (2.613 → 2.656, 3.512 → 3.561) and gain at 8 (5.411 → 5.368); the tower's
// lose at 2 (0.850 → 0.894) and gain at 4 and 8 (1.122 → 1.110, 2.042 →
// 2.008).
func rowsAheadFrom(site gemvSite) int {
	if site == siteTower {
		return 4
	}
	return 8
}

// rowsAhead says whether a projection of nb rows at site loads ahead.
func rowsAhead(site gemvSite, nb int) bool { return gemvAhead[site] && nb >= rowsAheadFrom(site) }

func parseGemvAhead(v string) (on [siteCount]bool) {
	switch v {
	case "":
		on[siteOut], on[siteDense], on[siteTower] = true, true, true
	case "1":
		on[siteIn], on[siteOut], on[siteDense], on[siteTower] = true, true, true, true
	default:
		for _, name := range strings.Split(v, ",") {
			for s, n := range gemvSiteNames {
				if n != "" && strings.TrimSpace(name) == n {
					on[s] = true
				}
			}
		}
	}
	return on
}

package cuda

import (
	"fmt"
	"strconv"
	"strings"
)

// GemvVariant is one compiled instance of a GEMV kernel (kernels/gemv.cu):
// groups of TPR threads share a row, each group computes Rows rows, Unroll
// 16-byte loads per thread and row are in flight at once.
type GemvVariant struct {
	TPR, Rows, Unroll int
}

// Name is the kernel name suffix, e.g. "t128r2u2".
func (v GemvVariant) Name() string { return fmt.Sprintf("t%dr%du%d", v.TPR, v.Rows, v.Unroll) }

const gemvThreads = 256 // GEMV_THREADS in kernels/gemv.cu

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
// up matrices of 8 experts) a warp per 4 rows.
func ChooseGemv(fp8 bool, rows, cols, n int) GemvVariant {
	switch {
	case fp8 && cols <= 512:
		return GemvVariant{32, 8, 1}
	case fp8 && cols >= 4096:
		return GemvVariant{256, 4, 1}
	case fp8 && n*rows < 8192:
		return GemvVariant{64, 4, 2}
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

// GemvF64Choice is the instance of a float64 (backbone) projection: a
// variant of the register instances (gemv_{bf16,fp8}d_…) or, Staged, of the
// instances that stage x in shared memory (gemv_{bf16,fp8}s_…, FP8 scales
// folded; at most GemvStagedMaxCols columns).
type GemvF64Choice struct {
	Variant GemvVariant
	Staged  bool
}

// GemvStagedMaxCols is GEMV_XS_MAX in kernels/gemv.cu.
const GemvStagedMaxCols = 4096

// Name is "s" + the variant's name for a staged instance, else the variant's.
func (c GemvF64Choice) Name() string {
	if c.Staged {
		return "s" + c.Variant.Name()
	}
	return c.Variant.Name()
}

// ChooseGemvF64 picks the float64 instance for a [rows, cols] projection
// applied to n matrices at once: ChooseGemv's variant (measured with float32
// sums), unless overrides (PROSCENIUM_GPU_GEMV64, see ParseGemvF64Overrides)
// name one for the format and column count.
func ChooseGemvF64(fp8 bool, rows, cols, n int, overrides map[string]GemvF64Choice) GemvF64Choice {
	format := "bf16"
	if fp8 {
		format = "fp8"
	}
	for _, key := range []string{fmt.Sprintf("%s:%d:%d", format, cols, n), fmt.Sprintf("%s:%d", format, cols), format} {
		if c, ok := overrides[key]; ok && (!c.Staged || cols <= GemvStagedMaxCols) {
			return c
		}
	}
	return GemvF64Choice{Variant: ChooseGemv(fp8, rows, cols, n)}
}

// ParseGemvF64Overrides reads a comma-separated list of KEY=INSTANCE, KEY
// one of bf16, fp8, FORMAT:COLS, FORMAT:COLS:N, INSTANCE a variant name
// (t32r4u4) or a staged one (st32r4u4) compiled in kernels/gemv.cu: the
// benchmark's way to time other choices without a rebuild.
func ParseGemvF64Overrides(s string) (map[string]GemvF64Choice, error) {
	out := map[string]GemvF64Choice{}
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
		c := GemvF64Choice{Staged: strings.HasPrefix(val, "s")}
		name := strings.TrimPrefix(val, "s")
		found := false
		for _, v := range list {
			if v.Name() == name {
				c.Variant, found = v, true
			}
		}
		if !found {
			return nil, fmt.Errorf("gemv override %q: no %s instance %q", item, parts[0], name)
		}
		out[key] = c
	}
	return out, nil
}

package cuda

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"proscenium/engine/cuda/kernel"
)

// The tensor-core GEMM of fast numerics (kernels/gemm.cu gemm_mma_body: BF16
// MMAs, each activation as three BF16 parts, float32 accumulation):
// its instances and which one a shape takes. Exact numerics never run them
// (the FP64 instances keep the CPU's bits).

// gemmMma is one instance: the BF16 parts of each activation, W rows (BM)
// by X rows (BN) per block, whether the block splits each X tile into its
// parts once (split: the grouped instances, one warp per 16 W rows) or each
// warp the X of its own fragments (the dense ones), and gemm31's variants
// (kernels/gemm.cu GEMM_MMA_PIPE): pipe loads each half step's fragments
// while the previous half's MMAs run (BF16 dense: A by ldmatrix). gemm31's
// L2 prefetch variants (l, ql) moved nothing and are gone (docs/PERF.md).
type gemmMma struct {
	parts, bm, bn int
	split         bool
	pipe          bool
	// wide is gemm32's family of a split tile ("": none; gemmWides):
	// KS sub-steps of 32 columns a ring stage, the ring in dynamic shared
	// memory (kernels/gemm.cu GEMM_MMA_WIDE).
	wide string
	// splits is dense33's split-K (kernels/gemm.cu GEMM_MMA_SPLITK; 0:
	// none): the tile's k steps over splits blocks (the grid's z), their
	// float32 partial tiles summed in z order by each tile's last block
	// (dsplit34; the workspace: gemm_splitk_cuda.go). One compiled entry
	// serves every count (gemmMma.kernel).
	splits int
	// f16 is f16p34's part format (kernels/gemm.cu GEMM_PARTS_F16): each
	// x as two FP16 parts under a power of two per X row and ring stage,
	// the E4M3 weights as FP16 pairs; FP8 grouped wide instances only
	// (gemmF16Shapes), named h2m…
	f16 bool
}

// gemmMmaInstances are the compiled instances by Gemm.Kernel name
// ("p3m128n64": three parts, 128 W rows by 64 X rows; "p3m128n16s": split
// once per block; a suffix q: the variant).
var gemmMmaInstances = func() map[string]gemmMma {
	m := map[string]gemmMma{}
	for _, s := range gemmMmaShapes {
		m[s.name()] = s
	}
	for _, s := range gemmWideShapes {
		m[s.name()] = s
	}
	for _, s := range gemmF16Shapes {
		m[s.name()] = s
	}
	for z := 2; z <= gemmSplitMax; z++ {
		x := gemmSplitTile
		x.splits = z
		m[x.name()] = x
	}
	return m
}()

// gemmMmaBase are the instances' tiles (kernels/gemm.cu's GEMM_MMA_ALL
// lines): the dense tiles first, largest first, then the grouped ones.
var gemmMmaBase = []gemmMma{
	{parts: gemmParts, bm: 128, bn: 64}, {parts: gemmParts, bm: 128, bn: 32}, {parts: gemmParts, bm: 64, bn: 32},
	{parts: gemmParts, bm: 64, bn: 16},
	{parts: gemmParts, bm: 128, bn: 32, split: true}, {parts: gemmParts, bm: 128, bn: 16, split: true},
	{parts: gemmParts, bm: 128, bn: 8, split: true},
}

// gemmMmaShapes are the instances kernels/gemm.cu compiles, in its order:
// each tile as it is, then its variant q (GEMM_MMA_ALL).
var gemmMmaShapes = func() []gemmMma {
	var all []gemmMma
	for _, b := range gemmMmaBase {
		for _, v := range gemmVariants {
			x, _ := b.variant(v)
			all = append(all, x)
		}
	}
	return all
}()

// gemmVariants are the variant suffixes each tile is compiled with ("":
// the tile as before gemm31).
var gemmVariants = []string{"", "q"}

// variant is x with the variant of suffix v ("" or q).
func (x gemmMma) variant(v string) (gemmMma, error) {
	switch v {
	case "", "q":
		x.pipe = v == "q"
		return x, nil
	}
	return x, fmt.Errorf("cuda: GEMM variant %q (want one of \"\", q)", v)
}

func (x gemmMma) name() string {
	p := "p"
	if x.f16 {
		p = "h"
	}
	s := p + strconv.Itoa(x.parts) + "m" + strconv.Itoa(x.bm) + "n" + strconv.Itoa(x.bn)
	if x.split {
		s += "s"
	}
	if x.pipe {
		s += "q"
	}
	s += x.wide
	if x.splits > 0 {
		s += "z" + strconv.Itoa(x.splits)
	}
	return s
}

// kernel is the suffix of x's compiled entry point: its name, with a
// split-K instance's count dropped (p3m128n64qz3 runs gemm_mma_*_p3m128n64qz
// on a grid of 3 in z).
func (x gemmMma) kernel() string {
	if x.splits > 0 {
		x.splits = 0
		return x.name() + "z"
	}
	return x.name()
}

// gemmVariant is $PROSCENIUM_GPU_GEMM_VARIANT: the variant (q or none) of
// every instance ChooseGemmFast picks, or DENSE/GROUPED (as "q/none") one for the dense GEMMs and one for the grouped experts; empty: the
// default, gemmDefaultVariant's.
var gemmVariant = os.Getenv("PROSCENIUM_GPU_GEMM_VARIANT")

// gemmVariantFor is the variant of tile x for dense (groups 0) or grouped
// GEMMs.
func gemmVariantFor(x gemmMma, groups int) string {
	switch gemmVariant {
	case "":
		return gemmDefaultVariant(x, groups)
	case "none":
		return ""
	}
	dense, grouped, two := strings.Cut(gemmVariant, "/")
	if !two {
		return gemmVariant
	}
	v := dense
	if groups > 0 {
		v = grouped
	}
	if v == "none" {
		return ""
	}
	return v
}

// gemmDefaultVariant is the variant measured best for tile x (session 10
// run 3, TestGemmFastSpeed on the full geometry's shapes; docs/PERF.md
// "gemm31"): q (fragments by ldmatrix, loaded a half step ahead) on the
// dense tiles that do not split x once per block, 128 × 64, 128 × 32 and
// 64 × 32 (1.29–1.31× on 128 × 64, 1.09–1.10× on 128 × 32, 1.00–1.03× on
// 64 × 32); none on 64 × 16 (q 0.94–0.98×), on the split tiles (q
// 0.97–1.00×, their fragments already split once) and on the grouped
// experts (q 0.93–0.99×; the L2 hint l moved them by ±2 %).
func gemmDefaultVariant(x gemmMma, groups int) string {
	if groups == 0 && !x.split && !(x.bm == 64 && x.bn == 16) {
		return "q"
	}
	return ""
}

// gemmWides are gemm32's families of the grouped (split-once) tiles, by the
// suffix of their instances (kernels/gemm.cu GEMM_MMA_WIDE_ALL): k{BK}
// columns a ring stage, b{blocks an SM} (the dynamic shared memory each
// block takes: gemmMma.smem). k32b2: 32 columns a stage as before, a ring
// of up to 12 stages in 112 KB (the ring's depth alone); k64b2: 64 columns
// (a barrier per 8 KB of FP8 weights), up to 12 stages in 112 KB; k128b1:
// 128 columns (a barrier per 16 KB, a whole FP8 scale block a stage), one
// block an SM with 224 KB; k32b3, k64b3: three blocks an SM (24 warps
// against 16) in 74 KB each, ptxas held to 80 registers (the 128 × 32
// tile spills 32–64 bytes there).
var gemmWides = []string{"k32b2", "k64b2", "k128b1", "k32b3", "k64b3"}

// gemmWideShapes are the wide instances kernels/gemm.cu compiles, in its
// order: the grouped tiles 128 × 32, × 16, × 8, each in every family.
var gemmWideShapes = func() []gemmMma {
	var all []gemmMma
	for _, bn := range []int{32, 16, 8} {
		for _, w := range gemmWides {
			all = append(all, gemmMma{parts: gemmParts, bm: 128, bn: bn, split: true, wide: w})
		}
	}
	return all
}()

// gemmF16Wides are the wide families f16p34's FP16-part instances are
// compiled in (kernels/gemm.cu GEMM_MMA_F16_ALL): the grouped experts'
// defaults (gemmGroupedDefault).
var gemmF16Wides = []string{"k64b2", "k64b3"}

// gemmF16Shapes are f16p34's instances kernels/gemm.cu compiles (FP8
// only), in its order: the grouped tiles 128 × 32, × 16, × 8, each in
// every family of gemmF16Wides.
var gemmF16Shapes = func() []gemmMma {
	var all []gemmMma
	for _, bn := range []int{32, 16, 8} {
		for _, w := range gemmF16Wides {
			all = append(all, gemmMma{parts: 2, bm: 128, bn: bn, split: true, wide: w, f16: true})
		}
	}
	return all
}()

// gemmF16Default is which grouped FP8 expert tiles take f16p34's FP16
// parts with $PROSCENIUM_GPU_GEMM_F16 unset: "wide", the tiles of 16 and 32
// X rows a pass. Session 12's run 2 (docs/PERF.md "f16p34"): a 300-row
// layer's experts 0.408 → 0.379 ms (k64b3 of 16 rows), 700 rows 0.717 →
// 0.673 (k64b2 of 32), but 60 rows 0.272 → 0.299 (k64b2 of 8): the 8-row
// tile keeps three BF16 parts.
const gemmF16Default = "wide"

// gemmF16 is $PROSCENIUM_GPU_GEMM_F16: "on" gives every grouped expert
// tile f16p34's FP16-part instance of its tile and wide family where one
// is compiled (gemmF16Wides), "wide" those of 16 X rows or more, "off"
// none (gemm32's three BF16 parts); empty: gemmF16Default.
var gemmF16 = os.Getenv("PROSCENIUM_GPU_GEMM_F16")

// gemmF16For reports whether the grouped experts' tile of bn X rows takes
// FP16 parts.
func gemmF16For(bn int) bool {
	v := gemmF16
	if v == "" {
		v = gemmF16Default
	}
	switch v {
	case "on":
		return true
	case "wide":
		return bn >= 16
	}
	return false
}

// bf16Twin is x's instance with three BF16 parts: itself, or for an FP16
// one (FP8 weights only) the same tile and family as gemm32 compiled it,
// which a grouped GEMM of BF16 weights runs instead.
func (x gemmMma) bf16Twin() gemmMma {
	if x.f16 {
		x.f16, x.parts = false, gemmParts
	}
	return x
}

// smem is the dynamic shared memory a block of x takes (0: its ring is
// static, within 48 KB).
func (x gemmMma) smem() int {
	switch {
	case x.wide == "":
		return 0
	case strings.HasSuffix(x.wide, "b1"):
		return kernel.GemmMmaSmemB1
	case strings.HasSuffix(x.wide, "b3"):
		return kernel.GemmMmaSmemB3
	}
	return kernel.GemmMmaSmemB2
}

// gemmGroupedDefault is the wide family the grouped experts take by
// default ("": gemm28's split tiles as they are): each tile's best in
// session 11's run 2 (TestGemmFastSpeed, one layer's experts: 8 X rows
// k64b2 1.34×, 16 rows k64b3 1.27×, 32 rows k64b2 1.07×; docs/PERF.md
// "gemm32"); $PROSCENIUM_GPU_GEMM_GROUPED=none the tiles.
const gemmGroupedDefault = "k64b2/k64b3/k64b2"

// gemmGrouped is $PROSCENIUM_GPU_GEMM_GROUPED: the wide family (gemmWides)
// of the grouped experts' tile, or N8/N16/N32 a family for each of the
// tiles of 8, 16 and 32 X rows (as "k64b3/k64b3/k64b2"); "none" the tile as
// it is; empty: gemmGroupedDefault. An unknown family names no instance
// (Gemm.instance reports it).
var gemmGrouped = os.Getenv("PROSCENIUM_GPU_GEMM_GROUPED")

// gemmGroupedFamily is the wide family of the grouped experts' tile of bn
// X rows.
func gemmGroupedFamily(bn int) string {
	v := gemmGrouped
	if v == "" {
		v = gemmGroupedDefault
	}
	if f := strings.Split(v, "/"); len(f) == 3 {
		v = f[0]
		switch bn {
		case 16:
			v = f[1]
		case 32:
			v = f[2]
		}
	}
	if v == "none" {
		return ""
	}
	return v
}

// gemmMmaThreads is the tensor-core GEMM's block (8 warps).
const gemmMmaThreads = kernel.GemmMmaThreads

// gemmParts is the BF16 parts of each activation the instances take: three
// (x's 24 bits); two missed fast's 1e-4 on the odd checkpoints' prefill
// (docs/PERF.md "Prefill GEMM core").
const gemmParts = 3

// gemmSMs is the streaming multiprocessors of an H200, the device the
// tiles are chosen for.
const gemmSMs = 132

// ChooseGemmFast picks the tensor-core instance of a GEMM of n rows of X
// and rows rows of W. Grouped (groups > 0: the experts of a prefill, n pairs
// over groups experts), a block runs its whole group over one 128-row W
// tile, BN X rows a pass: the narrowest tile holding the mean pairs per
// expert, so that a few rows an expert do not pay for 32. Dense, by
// gemmTiles31 (or, PROSCENIUM_GPU_GEMM_TILES=main, the largest tile whose
// grid gives every SM of an H200 two blocks). The instance is the tile's
// variant gemmVariantFor names; an unknown variant gives a name no
// instance has, which Gemm.instance reports.
func ChooseGemmFast(n, rows, groups int) string {
	x := chooseGemmTile(n, rows, groups)
	if groups > 0 {
		if w := gemmGroupedFamily(x.bn); w != "" {
			x.wide = w
			if gemmF16For(x.bn) && slices.Contains(gemmF16Wides, w) {
				x.f16, x.parts = true, 2
			}
			return x.name()
		}
	}
	if groups == 0 && x.split && gemmDenseWide != "" && gemmDenseWide != "none" {
		x.wide = gemmDenseWide
		return x.name()
	}
	return x.name() + gemmVariantFor(x, groups)
}

// gemmDenseWide is $PROSCENIUM_GPU_GEMM_DENSE_WIDE: the wide family
// (gemmWides) of the dense GEMMs whose tile is a split one (gemmTiles31's
// 128 × 32 s and 128 × 16 s: the 300-row out, router and shared down, the
// 60-row DeltaNet in and qkv, the 700-row router); empty or "none": the
// tile as it is (the default).
var gemmDenseWide = os.Getenv("PROSCENIUM_GPU_GEMM_DENSE_WIDE")

// gemmTiles is $PROSCENIUM_GPU_GEMM_TILES: empty or "31" picks the dense
// tiles by gemmTiles31 (gemm31's rule, the default since session 10's run
// 3); "main" by the rule before it (the largest of the four dense tiles
// whose grid gives each SM two blocks).
var gemmTiles = os.Getenv(GemmTilesEnv)

// GemmTilesEnv is the environment variable of the dense tile rule
// (gemmTiles).
const GemmTilesEnv = "PROSCENIUM_GPU_GEMM_TILES"

// gemmTiles31 is gemm31's dense tile rule: the first tile whose grid has
// at least min blocks, the 128-row split-once tiles (one warp per 16 W
// rows, X split once per block) allowed from one block per SM, the others
// from two; 64 × 16 when none has. On the full geometry's fifteen dense
// shapes of 60, 300 and 700 rows it picks the fastest tile measured in
// session 9's run 4 (TestGemmFastSpeed) or one within 3.5 % of it
// (docs/PERF.md "gemm31"); main's rule gives up 10–46 % on six of them.
var gemmTiles31 = []struct {
	tile gemmMma
	min  int
}{
	{gemmMma{parts: gemmParts, bm: 128, bn: 64}, 2 * gemmSMs},
	{gemmMma{parts: gemmParts, bm: 128, bn: 32}, 2 * gemmSMs},
	{gemmMma{parts: gemmParts, bm: 128, bn: 32, split: true}, gemmSMs},
	{gemmMma{parts: gemmParts, bm: 128, bn: 16, split: true}, gemmSMs},
	{gemmMma{parts: gemmParts, bm: 64, bn: 32}, 2 * gemmSMs},
	{gemmMma{parts: gemmParts, bm: 64, bn: 16}, 0},
}

func chooseGemmTile(n, rows, groups int) gemmMma {
	if groups > 0 {
		bn := 32
		switch mean := (n + groups - 1) / groups; {
		case mean <= 8:
			bn = 8
		case mean <= 16:
			bn = 16
		}
		return gemmMma{parts: gemmParts, bm: 128, bn: bn, split: true}
	}
	if gemmTiles != "main" {
		for _, c := range gemmTiles31 {
			if ((n+c.tile.bn-1)/c.tile.bn)*((rows+c.tile.bm-1)/c.tile.bm) >= c.min {
				return c.tile
			}
		}
	}
	dense := gemmMmaBase[:4]
	for _, s := range dense {
		if ((n+s.bn-1)/s.bn)*((rows+s.bm-1)/s.bm) >= 2*gemmSMs {
			return s
		}
	}
	return dense[len(dense)-1]
}

// mmaGrid is the grid of g on instance x: dense (X tiles, W tiles, 1, or
// split-K: the splits); grouped (1, W tiles, groups), each block running
// its group's rows.
func (g Gemm) mmaGrid(x gemmMma) [3]int {
	if g.Groups > 0 {
		return [3]int{1, (g.Rows + x.bm - 1) / x.bm, g.Groups}
	}
	return [3]int{(g.N + x.bn - 1) / x.bn, (g.Rows + x.bm - 1) / x.bm, max(x.splits, 1)}
}

// dense33 (issue 28; docs/PERF.md "dense33"): split-K for the dense GEMMs
// whose 128 × 64 grid leaves the H200's SMs without two blocks each — the
// out projections 4096 → 2048 (40 a prefill), router + shared gate·up
// 2048 → 1280 (40), and at 60 rows the DeltaNet in and qkv projections.
// Session 11's ncu (300 rows): the 128 × 64 q tile runs DeltaNet in at
// 0.165 ms (92 TFLOP/s useful, 485 blocks), while out takes 0.118 ms on
// 128 × 32 s (42 TFLOP/s: 160 blocks, 1.2 an SM, 10 warps an SM, a warp
// issuing every 6.7 cycles). Split over z, the same tile gives every SM
// its two blocks of fewer steps each.

// gemmSplitTile is the tile of the split-K instances (kernels/gemm.cu
// GEMM_MMA(…, GEMM_MMA_PIPE | GEMM_MMA_SPLITK, qz)): 128 × 64 with gemm31's
// q, the fastest tile per MMA (session 10 run 3: 1.29–1.31× its plain
// form).
var gemmSplitTile = gemmMma{parts: gemmParts, bm: 128, bn: 64, pipe: true}

// gemmSplitShapes are dense33's entry points kernels/gemm.cu compiles
// (after the wide ones), by gemmMma.kernel: the split-K tile. (dense33's
// deep ring for the 128 × 64 q tile, GEMM_MMA_DEEP, lost on the H200 and
// is gone: docs/PERF.md "dense33".)
var gemmSplitShapes = []string{gemmSplitTile.name() + "z"}

// gemmSplitMax is the most splits; gemmSplitMinSteps the fewest 32-column
// steps a split runs (a block's ring fill and epilogue cost ≈ gemmSplitCost
// steps: below 8 steps a split is mostly start-up).
const (
	gemmSplitMax      = 16
	gemmSplitMinSteps = 8
	gemmSplitCost     = 4
)

// gemmSplitTiles is the most partial tiles (blocks) a split GEMM may have:
// the split-K workspace holds that many 128 × 64 float32 partials (32 KB
// each) and as many tile counters (GemmSplitBytes). Four blocks an SM of
// an H200 (two rounds): the full geometry's largest split is out at 700
// rows, 176 tiles × 3 = 528.
const gemmSplitTiles = 4 * gemmSMs

// gemmSplitCounterBytes is the workspace's counters (a uint32 a tile, at
// most gemmSplitTiles tiles), rounded to 256 bytes; the partials follow.
const gemmSplitCounterBytes = (4*gemmSplitTiles + 255) / 256 * 256

// GemmSplitBytes is the split-K workspace (dsplit34): gemmSplitTiles
// counters, then gemmSplitTiles partial tiles of 128 × 64 float32s
// (17.3 MB). The backbone's plan holds one (BackbonePlan.GemmSplit).
const GemmSplitBytes = gemmSplitCounterBytes + gemmSplitTiles*128*64*4

// gemmSplitKDefault is the split-K mode with $PROSCENIUM_GPU_GEMM_SPLITK
// unset: "on", the rule. Session 12's run 1 (the fast prefill of 60 / 300
// / 700 rows): none 21.0 / 43.3 / 96.9 ms, "2" 21.2 / 41.7 / 95.0, "on"
// 18.5 / 42.1 / 92.6 — then with dense33's atomic adds in arrival order
// (a take's codes could change from run to run at a near-tie, so the
// default was "2"); since dsplit34 each tile's last block sums the
// partials in z order, the same bits every run for any count
// (docs/PERF.md "dsplit34"). The flip back: "2".
const gemmSplitKDefault = "on"

// gemmSplitK is $PROSCENIUM_GPU_GEMM_SPLITK: "on" splits the dense GEMMs
// gemmSplitFor chooses, a number N the same with at most N splits, "none"
// none; empty:
// gemmSplitKDefault. "all" (a check, not a speed-up): every dense GEMM of
// two steps or more in min(steps, gemmSplitMax) splits, so that the tiny
// checkpoints' prefill runs every projection split.
var gemmSplitK = os.Getenv(GemmSplitKEnv)

// GemmSplitKEnv is the environment variable of the dense GEMMs' split-K
// mode (gemmSplitK).
const GemmSplitKEnv = "PROSCENIUM_GPU_GEMM_SPLITK"

// gemmSplitFor is the splits of a dense GEMM of n X rows, rows W rows and
// cols columns under $PROSCENIUM_GPU_GEMM_SPLITK (0: not split, the tile
// ChooseGemmFast picks). Only where the 128 × 64 grid (B blocks) is short
// of two blocks an SM and the matrix has ≥ 4·gemmSplitMinSteps steps
// (T = ⌈cols/32⌉: not the 512-column shared down): the count Z ≤ the
// mode's most with T/Z ≥ gemmSplitMinSteps and B·Z ≤ gemmSplitTiles whose
// waves × steps plus the last blocks' reads, ⌈B·Z / 264⌉ · (⌈T/Z⌉ +
// gemmSplitCost) + Z/4, is least (the first of equals).
// Full geometry: out 60 / 300 / 700 rows Z = 16 / 3 / 3, router + shared
// 8 / 5 / 2, DeltaNet in at 60 rows 5, qkv 3; nothing at 300 and 700
// rows for in and qkv (485 and more blocks).
func gemmSplitFor(n, rows, cols int) int {
	mode := gemmSplitK
	if mode == "" {
		mode = gemmSplitKDefault
	}
	most := gemmSplitMax
	switch mode {
	case "", "none":
		return 0
	case "on":
	case "all":
		x := gemmSplitTile
		blocks := ((n + x.bn - 1) / x.bn) * ((rows + x.bm - 1) / x.bm)
		if z := min((cols+kernel.GemmMmaBk-1)/kernel.GemmMmaBk, gemmSplitMax, gemmSplitTiles/blocks); z >= 2 {
			return z
		}
		return 0
	default:
		v, err := strconv.Atoi(mode)
		if err != nil || v < 1 {
			return 0 // Gemm.instance names the value in its error (gemmSplitChecked)
		}
		most = min(v, gemmSplitMax)
	}
	x := gemmSplitTile
	blocks := ((n + x.bn - 1) / x.bn) * ((rows + x.bm - 1) / x.bm)
	steps := (cols + kernel.GemmMmaBk - 1) / kernel.GemmMmaBk
	if blocks >= 2*gemmSMs || steps < 4*gemmSplitMinSteps {
		return 0
	}
	// In quarter steps: the rounds' steps, and the tile's last block
	// reading the Z partials (≈ a quarter step a split; dsplit34).
	cost := func(z int) int {
		return 4*((blocks*z+2*gemmSMs-1)/(2*gemmSMs))*((steps+z-1)/z+gemmSplitCost) + z
	}
	best := 1
	for z := 2; z <= most && steps/z >= gemmSplitMinSteps && blocks*z <= gemmSplitTiles; z++ {
		if cost(z) < cost(best) {
			best = z
		}
	}
	if best == 1 {
		return 0
	}
	return best
}

// gemmSplitChecked reports a $PROSCENIUM_GPU_GEMM_SPLITK that names no
// mode.
func gemmSplitChecked() error { return gemmSplitKSetting(gemmSplitK) }

// gemmSplitKSetting checks a value of $PROSCENIUM_GPU_GEMM_SPLITK.
func gemmSplitKSetting(v string) error {
	switch v {
	case "", "none", "on", "all":
		return nil
	}
	if n, err := strconv.Atoi(v); err != nil || n < 1 {
		return fmt.Errorf("cuda: %s=%q (want on, none, all or a most count ≥ 1)", GemmSplitKEnv, v)
	}
	return nil
}

// ChooseGemmFastCols is ChooseGemmFast knowing the columns: a dense GEMM
// gemmSplitFor splits takes the split-K instance, every other its pick.
func ChooseGemmFastCols(n, rows, cols, groups int) string {
	k := ChooseGemmFast(n, rows, groups)
	if groups != 0 {
		return k
	}
	if z := gemmSplitFor(n, rows, cols); z > 0 {
		x := gemmSplitTile
		x.splits = z
		return x.name()
	}
	return k
}

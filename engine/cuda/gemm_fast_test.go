package cuda

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"proscenium/engine/cuda/kernel"
)

// TestChooseGemmFast: the experts of a prefill take the narrowest X tile
// holding the mean pairs per expert, an instance that splits X once per
// block; dense GEMMs the largest tile whose grid
// gives each of the 132 SMs two blocks; every choice is a compiled instance
// and its grid covers the output.
func TestChooseGemmFast(t *testing.T) {
	defer func(v, r, g, d string) { gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide = v, r, g, d }(
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide)
	// the rule before gemm31, no variant, no wide family, whatever the environment says
	gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide = "none", "main", "none", ""
	for _, c := range []struct {
		n, rows, groups int
		want            string
	}{
		{60 * 8, 1024, 256, "m128n8s"},   // a 60-row prefill: ~2 pairs an expert
		{300 * 8, 1024, 256, "m128n16s"}, // ~9
		{700 * 8, 2048, 256, "m128n32s"}, // ~22
		{70 * 3, 136, 6, "m128n32s"},
		{60, 2048, 0, "m64n16"},    // 4 × 32 = 128 blocks: the smallest tile
		{60, 12352, 0, "m64n32"},   // 2 × 97 = 194 of 128 × 32: too few; 2 × 193
		{300, 2048, 0, "m64n32"},   // 10 × 16 = 160 of 128 × 32; 10 × 32
		{300, 1280, 0, "m64n16"},   // 10 × 20 = 200 of 64 × 32; 19 × 20
		{300, 12352, 0, "m128n64"}, // 5 × 97 = 485
		{700, 2048, 0, "m128n32"},  // 11 × 16 = 176 of 128 × 64; 22 × 16
	} {
		got := ChooseGemmFast(c.n, c.rows, c.groups)
		x, ok := gemmMmaInstances[got]
		if !ok {
			t.Fatalf("%+v: %q is not a compiled instance", c, got)
		}
		if want := "p" + strconv.Itoa(gemmParts) + c.want; got != want {
			t.Errorf("n %d rows %d groups %d: %s, want %s", c.n, c.rows, c.groups, got, want)
		}
		g := Gemm{N: c.n, Rows: c.rows, Cols: 64, Groups: c.groups}
		grid := g.mmaGrid(x)
		if x.split != (c.groups > 0) {
			t.Errorf("%+v: %s splits X once per block: %v, want it for the grouped experts only", c, got, x.split)
		}
		if grid[1]*x.bm < c.rows || (c.groups == 0 && grid[0]*x.bn < c.n) || (c.groups > 0 && (grid[0] != 1 || grid[2] != c.groups)) {
			t.Errorf("%+v on %s: grid %v does not cover the output", c, got, grid)
		}
	}
}

// TestGemmMmaInstancesCompiled: every instance ChooseGemmFast and the tests
// may name is an entry point of kernels/gemm.cu in both weight formats, and
// every compiled one is listed.
func TestGemmMmaInstancesCompiled(t *testing.T) {
	var bf16, fp8 []string
	for _, s := range append(slices.Clone(gemmMmaShapes), gemmWideShapes...) {
		bf16 = append(bf16, "gemm_mma_bf16_"+s.name())
		fp8 = append(fp8, "gemm_mma_fp8_"+s.name())
	}
	var gotBF16, gotFP8 []string
	for _, k := range kernel.GemmMmaBF16Kernels {
		gotBF16 = append(gotBF16, string(k))
	}
	for _, k := range kernel.GemmMmaFP8Kernels {
		gotFP8 = append(gotFP8, string(k))
	}
	for _, s := range gemmF16Shapes { // f16p34's: FP8 only
		fp8 = append(fp8, "gemm_mma_fp8_"+s.name())
	}
	if !slices.Equal(bf16, gotBF16) || !slices.Equal(fp8, gotFP8) {
		t.Fatalf("gemmMmaShapes names %v and %v; kernels/gemm.cu compiles %v and %v", bf16, fp8, gotBF16, gotFP8)
	}
	// The split-K entry points take the workspace too: entry points of
	// their own (kernel.GemmMmaBF16P3m128n64qz, GemmMmaFP8P3m128n64qz).
	for _, k := range gemmSplitShapes {
		for _, e := range []string{"gemm_mma_bf16_" + k, "gemm_mma_fp8_" + k} {
			if !slices.Contains(kernel.EntryPoints["gemm"], e) {
				t.Errorf("split-K entry point %s is not compiled", e)
			}
		}
	}
}

// TestChooseGemmFastVariant: under $PROSCENIUM_GPU_GEMM_VARIANT each pick
// is its tile's variant, a compiled instance with the tile's shape; an
// unknown variant names no instance (Gemm.instance reports it) and
// gemmMma.variant refuses it.
func TestChooseGemmFastVariant(t *testing.T) {
	defer func(v, r, g, d string) { gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide = v, r, g, d }(
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide)
	gemmTiles, gemmGrouped, gemmDenseWide = "main", "none", ""
	for _, v := range []string{"none", "q"} {
		gemmVariant = v
		for _, c := range [][3]int{{60 * 8, 1024, 256}, {300 * 8, 1024, 256}, {700 * 8, 2048, 256}, {60, 2048, 0}, {300, 12352, 0}, {700, 2048, 0}} {
			gemmVariant = "none"
			tile := ChooseGemmFast(c[0], c[1], c[2])
			gemmVariant = v
			got := ChooseGemmFast(c[0], c[1], c[2])
			x, ok := gemmMmaInstances[got]
			if !ok {
				t.Fatalf("variant %q, %v: %q is not a compiled instance", v, c, got)
			}
			base := gemmMmaInstances[tile]
			if x.bm != base.bm || x.bn != base.bn || x.split != base.split || x.pipe != (v == "q") {
				t.Errorf("variant %q, %v: %s (%+v), tile %s", v, c, got, x, tile)
			}
		}
	}
	gemmVariant = "none/q"
	if d, g := ChooseGemmFast(300, 12352, 0), ChooseGemmFast(300*8, 1024, 256); d != "p3m128n64" || g != "p3m128n16sq" {
		t.Errorf("variant none/q: dense %s, grouped %s; want p3m128n64, p3m128n16sq", d, g)
	}
	gemmVariant = "q/none"
	if d, g := ChooseGemmFast(300, 12352, 0), ChooseGemmFast(300*8, 1024, 256); d != "p3m128n64q" || g != "p3m128n16s" {
		t.Errorf("variant q/none: dense %s, grouped %s; want p3m128n64q, p3m128n16s", d, g)
	}
	for _, v := range []string{"l", "ql"} { // gemm31's L2 prefetch variants, removed
		gemmVariant = v
		if k := ChooseGemmFast(300, 12352, 0); gemmMmaInstances[k] != (gemmMma{}) {
			t.Errorf("variant %s picks %q, an instance", v, k)
		}
		if _, err := (gemmMma{}).variant(v); err == nil {
			t.Errorf("variant %s accepted", v)
		}
	}
}

// TestGemmTiles31: gemm31's dense tile rule on the full geometry's dense
// shapes picks the tile session 9's run 4 measured fastest, or within
// 3.5 % of it (docs/PERF.md "gemm31"); it is the default, "main" the rule
// before it.
func TestGemmTiles31(t *testing.T) {
	defer func(v string) { gemmTiles = v }(gemmTiles)
	for _, c := range []struct {
		n, rows   int
		main, t31 string
	}{
		{60, 12352, "m64n32", "m128n32s"}, // DeltaNet in: 0.0724 → 0.0633 ms
		{60, 9216, "m64n32", "m128n32s"},  // attention qkv: 0.0719 → 0.0614
		{60, 2048, "m64n16", "m64n16"},    // out, shared down
		{60, 1280, "m64n16", "m64n16"},    // router + shared gate·up
		{300, 12352, "m128n64", "m128n64"},
		{300, 9216, "m128n64", "m128n64"},
		{300, 2048, "m64n32", "m128n32s"}, // out 0.1396 → 0.1185, shared down 0.0201 → 0.0179
		{300, 1280, "m64n16", "m128n16s"}, // 0.0455 → 0.0413
		{700, 12352, "m128n64", "m128n64"},
		{700, 9216, "m128n64", "m128n64"},
		{700, 2048, "m128n32", "m128n32"},
		{700, 1280, "m64n32", "m128n32s"}, // 0.0884 → 0.0607
	} {
		for _, rule := range []string{"main", "31", ""} { // "": the default, gemm31's
			gemmTiles = rule
			want := "p3" + c.main
			if rule != "main" {
				want = "p3" + c.t31
			}
			got := chooseGemmTile(c.n, c.rows, 0)
			if got.name() != want {
				t.Errorf("rule %q, n %d rows %d: %s, want %s", rule, c.n, c.rows, got.name(), want)
			}
			if _, ok := gemmMmaInstances[got.name()]; !ok {
				t.Errorf("rule %q: %s is not an instance", rule, got.name())
			}
		}
	}
}

// TestGemmDefaultVariant: with no PROSCENIUM_GPU_GEMM_VARIANT the dense
// tiles that do not split x run q and the rest none, as session 10's run 3
// measured (gemmDefaultVariant), on the default tiles of the full
// geometry's shapes; the grouped experts' tiles take gemmGroupedDefault's
// family (session 11's run 2: k64b2, k64b3, k64b2 for 8, 16, 32 X rows),
// with FP16 parts from 16 X rows on (gemmF16Default, f16p34).
func TestGemmDefaultVariant(t *testing.T) {
	defer func(v, r, g, d, h string) {
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide, gemmF16 = v, r, g, d, h
	}(
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide, gemmF16)
	gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide, gemmF16 = "", "", "", "", ""
	for _, c := range []struct {
		n, rows, groups int
		want            string
	}{
		{60, 12352, 0, "m128n32s"},
		{60, 2048, 0, "m64n16"},
		{300, 12352, 0, "m128n64q"},
		{300, 2048, 0, "m128n32s"},
		{700, 2048, 0, "m128n32q"},
		{700, 9216, 0, "m128n64q"},
		{60 * 8, 1024, 256, "m128n8sk64b2"},
		{300 * 8, 1024, 256, "m128n16sk64b3"},
		{700 * 8, 2048, 256, "m128n32sk64b2"},
	} {
		got := ChooseGemmFast(c.n, c.rows, c.groups)
		want := "p3" + c.want
		if c.groups > 0 && gemmF16For(gemmMmaInstances[got].bn) { // f16p34's FP16 parts by default
			want = "h2" + c.want
		}
		if got != want {
			t.Errorf("n %d rows %d groups %d: %s, want %s", c.n, c.rows, c.groups, got, want)
		}
		if _, ok := gemmMmaInstances[got]; !ok {
			t.Errorf("%s is not a compiled instance", got)
		}
	}
}

// TestChooseGemmGrouped: $PROSCENIUM_GPU_GEMM_GROUPED gives the grouped
// experts' tile in a wide family (gemm32: a compiled instance of the same
// tile, dynamic shared memory within an sm_90 SM's 228 KB for the blocks
// an SM its name says) and leaves the dense picks alone; "none" and the
// default keep the tile as it is; an unknown family names no instance.
func TestChooseGemmGrouped(t *testing.T) {
	defer func(v, r, g, d, h string) {
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide, gemmF16 = v, r, g, d, h
	}(
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide, gemmF16)
	gemmVariant, gemmTiles, gemmDenseWide, gemmF16 = "", "", "", "off"
	grouped := [][3]int{{60 * 8, 1024, 256}, {300 * 8, 1024, 256}, {300 * 8, 2048, 256}, {700 * 8, 2048, 256}}
	dense := [][3]int{{60, 12352, 0}, {300, 2048, 0}, {700, 1280, 0}}
	for _, w := range gemmWides {
		for _, c := range append(slices.Clone(grouped), dense...) {
			gemmGrouped = "none"
			tile := ChooseGemmFast(c[0], c[1], c[2])
			gemmGrouped = w
			got := ChooseGemmFast(c[0], c[1], c[2])
			x, ok := gemmMmaInstances[got]
			if !ok {
				t.Fatalf("family %s, %v: %q is not a compiled instance", w, c, got)
			}
			if c[2] == 0 {
				if got != tile {
					t.Errorf("family %s, dense %v: %s, want %s as without it", w, c, got, tile)
				}
				continue
			}
			base := gemmMmaInstances[tile]
			if x.bm != base.bm || x.bn != base.bn || !x.split || x.pipe || x.wide != w || got != tile+w {
				t.Errorf("family %s, %v: %s (%+v), tile %s", w, c, got, x, tile)
			}
			blocks := int(w[len(w)-1] - '0')
			if b := x.smem(); b <= 48<<10 || blocks*(b+1024) > 228<<10 {
				t.Errorf("%s: %d bytes of dynamic shared memory for %d blocks an SM", got, b, blocks)
			}
		}
	}
	gemmGrouped = "none"
	if g := ChooseGemmFast(300*8, 1024, 256); g != "p3m128n16s" || gemmMmaInstances[g].smem() != 0 {
		t.Errorf("none: %s", g)
	}
	gemmGrouped = "k256b1"
	if g := ChooseGemmFast(300*8, 1024, 256); gemmMmaInstances[g] != (gemmMma{}) {
		t.Errorf("family k256b1 picks %q, an instance", g)
	}
	gemmGrouped = "k64b3/none/k128b1" // a family per tile: 8, 16, 32 X rows
	for _, c := range []struct {
		n    int
		want string
	}{{60 * 8, "p3m128n8sk64b3"}, {300 * 8, "p3m128n16s"}, {700 * 8, "p3m128n32sk128b1"}} {
		if g := ChooseGemmFast(c.n, 1024, 256); g != c.want {
			t.Errorf("%s, %d pairs: %s, want %s", gemmGrouped, c.n, g, c.want)
		}
	}
}

// TestChooseGemmDenseWide: $PROSCENIUM_GPU_GEMM_DENSE_WIDE gives the dense
// GEMMs whose tile is a split one that tile in the family, and leaves the
// other dense tiles and the grouped experts alone.
func TestChooseGemmDenseWide(t *testing.T) {
	defer func(v, r, g, d string) { gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide = v, r, g, d }(
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide)
	gemmVariant, gemmTiles, gemmGrouped = "", "", "none"
	for _, w := range gemmWides {
		for _, c := range [][3]int{{60, 12352, 0}, {300, 2048, 0}, {300, 1280, 0}, {700, 1280, 0}, {300, 12352, 0},
			{60, 2048, 0}, {300 * 8, 1024, 256}} {
			gemmDenseWide = ""
			tile := ChooseGemmFast(c[0], c[1], c[2])
			gemmDenseWide = w
			got := ChooseGemmFast(c[0], c[1], c[2])
			x, ok := gemmMmaInstances[got]
			if !ok {
				t.Fatalf("dense family %s, %v: %q is not a compiled instance", w, c, got)
			}
			if want := tile + w; c[2] == 0 && gemmMmaInstances[tile].split {
				if got != want {
					t.Errorf("dense family %s, %v: %s, want %s", w, c, got, want)
				}
			} else if got != tile || x.wide != "" {
				t.Errorf("dense family %s, %v: %s, want %s as without it", w, c, got, tile)
			}
		}
	}
}

// TestChooseGemmSplitK: dense33's split-K rule (gemmSplitFor) on the full
// geometry's dense shapes under each $PROSCENIUM_GPU_GEMM_SPLITK mode: off
// (unset, "none") every pick as before; "on" the counts its doc comment
// states, each a map entry whose compiled entry point (kernel) exists, its
// grid covering the output with the count in z and every split at least
// gemmSplitMinSteps steps, its blocks within the workspace's
// gemmSplitTiles; "2" at most two; "all" every GEMM of two steps or more
// within the workspace; the grouped experts never split; a bad value
// refused by Gemm.instance's check.
func TestChooseGemmSplitK(t *testing.T) {
	defer func(v, r, g, d, z string) {
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide, gemmSplitK = v, r, g, d, z
	}(gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide, gemmSplitK)
	gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide = "", "", "", ""
	shapes := []struct {
		n, rows, cols int
		on, two       int // the splits under "on" and "2"
	}{
		{60, 12352, 2048, 5, 2}, {60, 9216, 2048, 3, 2}, {60, 2048, 4096, 16, 2}, {60, 1280, 2048, 8, 2}, {60, 2048, 512, 0, 0},
		{300, 12352, 2048, 0, 0}, {300, 9216, 2048, 0, 0}, {300, 2048, 4096, 3, 2}, {300, 1280, 2048, 5, 2}, {300, 2048, 512, 0, 0},
		{700, 12352, 2048, 0, 0}, {700, 9216, 2048, 0, 0}, {700, 2048, 4096, 3, 0}, {700, 1280, 2048, 2, 2}, {700, 2048, 512, 0, 0},
	}
	for _, mode := range []string{"", "none", "on", "2"} {
		gemmSplitK = mode
		if err := gemmSplitChecked(); err != nil {
			t.Fatalf("mode %q: %v", mode, err)
		}
		for _, c := range shapes {
			got := ChooseGemmFastCols(c.n, c.rows, c.cols, 0)
			x, ok := gemmMmaInstances[got]
			if !ok {
				t.Fatalf("mode %q %+v: %q is not an instance", mode, c, got)
			}
			want := 0
			switch mode {
			case "on":
				want = c.on
			case "2":
				want = c.two
			}
			if gemmSplitKDefault != "" && mode == "" {
				continue // the default flipped: "on" covers it
			}
			if x.splits != want {
				t.Errorf("mode %q, n %d %d→%d: %s (%d splits), want %d", mode, c.n, c.cols, c.rows, got, x.splits, want)
			}
			if want == 0 {
				if pick := ChooseGemmFast(c.n, c.rows, 0); got != pick {
					t.Errorf("mode %q, n %d %d→%d: %s, ChooseGemmFast %s", mode, c.n, c.cols, c.rows, got, pick)
				}
				continue
			}
			if !slices.Contains(gemmSplitShapes, x.kernel()) || x.kernel() != "p3m128n64qz" {
				t.Errorf("%s runs %q, not a compiled split-K entry %v", got, x.kernel(), gemmSplitShapes)
			}
			g := Gemm{N: c.n, Rows: c.rows, Cols: c.cols}
			grid := g.mmaGrid(x)
			if grid[0]*x.bn < c.n || grid[1]*x.bm < c.rows || grid[2] != want || grid[0]*grid[1]*grid[2] > gemmSplitTiles {
				t.Errorf("%s on %+v: grid %v", got, c, grid)
			}
			if steps := (c.cols + 31) / 32; steps/grid[2] < gemmSplitMinSteps {
				t.Errorf("%s on %+v: %d steps a split", got, c, steps/grid[2])
			}
		}
		if g := ChooseGemmFastCols(300*8, 1024, 2048, 256); gemmMmaInstances[g].splits != 0 {
			t.Errorf("mode %q: grouped experts take %s", mode, g)
		}
	}
	gemmSplitK = "all"
	for _, c := range [][4]int{{300, 64, 1024, 16}, {300, 64, 96, 3}, {5, 136, 56, 2}, {5, 136, 40, 2}, {5, 136, 32, 0}, {700, 12352, 2048, 0}, {300, 2048, 2048, 6}} {
		if z := gemmSplitFor(c[0], c[1], c[2]); z != c[3] {
			t.Errorf("all: n %d %d→%d: %d splits, want %d", c[0], c[2], c[1], z, c[3])
		}
	}
	for _, bad := range []string{"yes", "0", "-1"} {
		gemmSplitK = bad
		if gemmSplitChecked() == nil {
			t.Errorf("PROSCENIUM_GPU_GEMM_SPLITK=%q accepted", bad)
		}
		if z := gemmSplitFor(60, 2048, 4096); z != 0 {
			t.Errorf("PROSCENIUM_GPU_GEMM_SPLITK=%q splits %d", bad, z)
		}
	}
	for z := 2; z <= gemmSplitMax; z++ {
		x := gemmSplitTile
		x.splits = z
		if y, ok := gemmMmaInstances[x.name()]; !ok || y != x || x.name() != "p3m128n64qz"+strconv.Itoa(z) {
			t.Errorf("%d splits: %q not an instance of itself", z, x.name())
		}
	}
}

// TestChooseGemmF16: under $PROSCENIUM_GPU_GEMM_F16=on the grouped experts
// take f16p34's FP16-part instance of the tile and family they take
// without it (a compiled FP8 instance: two parts, the same tile, family
// and shared memory), where one is compiled (gemmF16Wides); a family
// without one, "none", and every dense GEMM keep their pick; off and (by
// default) unset change nothing; an FP16 instance's BF16 twin is the
// three-part instance of the same tile and family.
func TestChooseGemmF16(t *testing.T) {
	defer func(v, r, g, d, h string) {
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide, gemmF16 = v, r, g, d, h
	}(
		gemmVariant, gemmTiles, gemmGrouped, gemmDenseWide, gemmF16)
	gemmVariant, gemmTiles, gemmDenseWide = "", "", ""
	cases := [][3]int{{60 * 8, 1024, 256}, {300 * 8, 1024, 256}, {300 * 8, 2048, 256}, {700 * 8, 2048, 256},
		{60, 12352, 0}, {300, 2048, 0}, {700, 1280, 0}}
	for _, fam := range append([]string{"", "none"}, gemmWides...) {
		gemmGrouped = fam
		for _, c := range cases {
			gemmF16 = "off"
			base := ChooseGemmFast(c[0], c[1], c[2])
			gemmF16 = ""
			if got := ChooseGemmFast(c[0], c[1], c[2]); (c[2] == 0 || gemmMmaInstances[base].bn < 16) && got != base {
				t.Errorf("family %q, %v: unset gives %s, off %s (no FP16 parts below 16 X rows by default)", fam, c, got, base)
			}
			gemmF16 = "on"
			got := ChooseGemmFast(c[0], c[1], c[2])
			x, ok := gemmMmaInstances[got]
			if !ok {
				t.Fatalf("family %q, %v: %q is not a compiled instance", fam, c, got)
			}
			b := gemmMmaInstances[base]
			if c[2] == 0 || !slices.Contains(gemmF16Wides, b.wide) {
				if got != base {
					t.Errorf("family %q, %v: on gives %s, want %s (no FP16 instance)", fam, c, got, base)
				}
				continue
			}
			if !x.f16 || x.parts != 2 || x.bm != b.bm || x.bn != b.bn || x.wide != b.wide || !x.split ||
				x.smem() != b.smem() || x.bf16Twin() != b || "h2"+strings.TrimPrefix(base, "p3") != got {
				t.Errorf("family %q, %v: on gives %s (%+v), off %s (%+v)", fam, c, got, x, base, b)
			}
		}
	}
	gemmGrouped = ""
	gemmF16 = "on"
	for _, c := range []struct {
		n    int
		want string
	}{{60 * 8, "h2m128n8sk64b2"}, {300 * 8, "h2m128n16sk64b3"}, {700 * 8, "h2m128n32sk64b2"}} {
		if g := ChooseGemmFast(c.n, 1024, 256); g != c.want {
			t.Errorf("default families, %d pairs: %s, want %s", c.n, g, c.want)
		}
	}
}

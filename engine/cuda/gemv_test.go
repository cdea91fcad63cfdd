package cuda

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"proscenium/engine/cuda/kernel"
)

func TestChooseGemvPicksACompiledInstance(t *testing.T) {
	for _, fp8 := range []bool{false, true} {
		list := GemvBF16Variants
		if fp8 {
			list = GemvFP8Variants
		}
		for _, s := range [][3]int{{8192, 2048, 1}, {2048, 4096, 1}, {512, 2048, 8}, {2048, 512, 8}, {3, 16, 1}, {1024, 2048, 16}, {1024, 2048, 64}} {
			v := ChooseGemv(fp8, s[0], s[1], s[2])
			if !slices.Contains(list, v) {
				t.Errorf("ChooseGemv(fp8=%v, %v) = %s, not an instance in kernels/gemv.cu", fp8, s, v.Name())
			}
		}
	}
}

// TestChooseGemvRoutedGateUp: the step's routed gate·up (FP8, 1024 rows of
// 2048 columns, k = 8 matrices a take) takes the variants the H200 measured
// fastest at its widths (session 22 run 3): a warp per 4 rows at 1 and 8
// takes, per 8 rows at 2 to 4.
func TestChooseGemvRoutedGateUp(t *testing.T) {
	for takes, want := range map[int]string{1: "t32r4u4", 2: "t32r8u1", 3: "t32r8u1", 4: "t32r8u1", 8: "t32r4u4"} {
		if got := ChooseGemv(true, 1024, 2048, 8*takes).Name(); got != want {
			t.Errorf("%d takes: %s, want %s", takes, got, want)
		}
	}
}

// The Go lists must name exactly the instances kernels/gemv.cu compiles.
func TestGemvVariantsMatchOpsCu(t *testing.T) {
	src, err := os.ReadFile("../../kernels/gemv.cu")
	if errors.Is(err, fs.ErrNotExist) && testing.Short() {
		t.Skip("kernels/gemv.cu not here (a carried test binary runs with -test.short)")
	}
	if err != nil {
		t.Fatal(err)
	}
	inst := regexp.MustCompile(`(?m)^GEMV_(BF16|FP8)\((\d+), (\d+), (\d+)\)`)
	got := map[string][]GemvVariant{}
	for _, m := range inst.FindAllStringSubmatch(string(src), -1) {
		tpr, _ := strconv.Atoi(m[2])
		rows, _ := strconv.Atoi(m[3])
		unroll, _ := strconv.Atoi(m[4])
		got[m[1]] = append(got[m[1]], GemvVariant{tpr, rows, unroll})
	}
	if !slices.Equal(got["BF16"], GemvBF16Variants) || !slices.Equal(got["FP8"], GemvFP8Variants) {
		t.Fatalf("gemv.cu instances %v, Go lists bf16 %v fp8 %v", got, GemvBF16Variants, GemvFP8Variants)
	}
}

// Every variant's grid covers every row once.
func TestGemvGridCoversRows(t *testing.T) {
	for _, v := range append(GemvBF16Variants, GemvFP8Variants...) {
		for _, rows := range []int{8192, 2048, 512, 200, 3, 1} {
			blocks, rb := v.Grid(rows)
			if blocks < 1 || (blocks-1)*rb >= rows || blocks*rb < rows {
				t.Errorf("%s rows %d: %d blocks of %d rows", v.Name(), rows, blocks, rb)
			}
		}
	}
}

func TestChooseGemvF64(t *testing.T) {
	o, err := ParseGemvF64Overrides("fp8=t32r8u1, bf16:4096=t256r4u1,bf16:2048:1=t128r2u2")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fp8           bool
		rows, cols, n int
		over          map[string]GemvVariant
		want          string
	}{
		{true, 1024, 2048, 8, o, "t32r8u1"},
		{false, 2048, 4096, 1, o, "t256r4u1"},
		{false, 8192, 2048, 1, o, "t128r2u2"},
		{false, 8192, 2048, 2, o, ChooseGemv(false, 8192, 2048, 2).Name()}, // no key for n = 2
		{false, 12352, 2048, 1, nil, "t32r4u2"},
		{false, 2048, 4096, 1, nil, "t128r4u2"},
		{false, 2048, 8192, 1, nil, "t128r4u2"},
		{false, 1281, 2048, 1, nil, ChooseGemv(false, 1281, 2048, 1).Name()},
		{false, 2048, 512, 8, nil, ChooseGemv(false, 2048, 512, 8).Name()},
		{true, 1024, 2048, 8, nil, ChooseGemv(true, 1024, 2048, 8).Name()},
	} {
		got := ChooseGemvF64(c.fp8, c.rows, c.cols, c.n, c.over)
		if got.Name() != c.want {
			t.Errorf("ChooseGemvF64(fp8=%v, %d, %d, %d) = %s, want %s", c.fp8, c.rows, c.cols, c.n, got.Name(), c.want)
		}
		list := GemvBF16Variants
		if c.fp8 {
			list = GemvFP8Variants
		}
		if !slices.Contains(list, got) {
			t.Errorf("ChooseGemvF64 picked %s, not an instance in kernels/gemv.cu", got.Name())
		}
	}
	for _, bad := range []string{"fp8", "fp16=t32r4u4", "fp8=t7r4u4", "bf16:x=t128r2u2", "bf16:1:2:3=t128r2u2", "fp8=t32r1u8"} {
		if _, err := ParseGemvF64Overrides(bad); err == nil {
			t.Errorf("ParseGemvF64Overrides(%q) accepted", bad)
		}
	}
}

// TestChooseGemvRowsCompiled: every choice of ChooseGemvRows at the B-row
// step's shapes is an instance kernels/gemv.cu compiles, and every B a step
// takes has a compiled width.
func TestChooseGemvRowsCompiled(t *testing.T) {
	for _, s := range [][2]int{{12352, 2048}, {9216, 2048}, {2048, 4096}, {1281, 2048}, {2048, 512}, {200, 136}} {
		for nb := 2; nb <= MaxStepRows; nb++ {
			v := ChooseGemvRows(s[0], s[1], nb)
			found := false
			for _, c := range GemvRowsVariants {
				found = found || c == v
			}
			if !found {
				t.Errorf("%d × %d, %d rows: %s is not compiled", s[0], s[1], nb, v.Name())
			}
			if gemvRowsWidth(nb) < nb {
				t.Errorf("%d rows: no compiled width", nb)
			}
		}
	}
}

// TestGemvRowsUseMMA: the tensor cores take the B-row step's long
// projections (8192 rows or more) from 4 rows on, never one of 2 rows, a
// short matrix or columns that are not a multiple of 32.
func TestGemvRowsUseMMA(t *testing.T) {
	for _, c := range []struct {
		rows, cols, nb int
		want           bool
	}{{12352, 2048, 4, true}, {12352, 2048, 8, true}, {9216, 2048, 3, true}, {12352, 2048, 2, false},
		{2048, 4096, 8, false}, {1281, 2048, 8, false}, {9216, 2040, 8, false}, {12352, 2048, 1, false}} {
		if got := gemvRowsUseMMA(c.rows, c.cols, c.nb); got != c.want && gemvRowsDefault == "" {
			t.Errorf("%d × %d, %d rows: tensor cores %v, want %v", c.rows, c.cols, c.nb, got, c.want)
		}
	}
}

// TestParseGemvAhead checks $PROSCENIUM_GPU_GEMV_AHEAD's values: unset the
// measured sites (the output and dense projections, the tower's), 0 none, 1
// all four, a list its names (others ignored).
func TestParseGemvAhead(t *testing.T) {
	for _, c := range []struct {
		v    string
		want [siteCount]bool
	}{
		{"", [siteCount]bool{siteOut: true, siteDense: true, siteTower: true}},
		{"0", [siteCount]bool{}},
		{"1", [siteCount]bool{siteIn: true, siteOut: true, siteDense: true, siteTower: true}},
		{"in", [siteCount]bool{siteIn: true}},
		{"out, dense,bogus", [siteCount]bool{siteOut: true, siteDense: true}},
		{"tower", [siteCount]bool{siteTower: true}},
	} {
		if got := parseGemvAhead(c.v); got != c.want {
			t.Errorf("parseGemvAhead(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

// TestRowsAhead: the B-row projections load ahead where their site does,
// from the rows measured to gain (the tower's from 4, the backbone's from 8).
func TestRowsAhead(t *testing.T) {
	prev := gemvAhead
	defer func() { gemvAhead = prev }()
	gemvAhead = parseGemvAhead("")
	for _, c := range []struct {
		site gemvSite
		nb   int
		want bool
	}{
		{siteTower, 2, false}, {siteTower, 4, true}, {siteTower, 8, true},
		{siteOut, 4, false}, {siteOut, 8, true}, {siteDense, 2, false}, {siteDense, 8, true},
		{siteIn, 8, false}, {siteOther, 8, false},
	} {
		if got := rowsAhead(c.site, c.nb); got != c.want {
			t.Errorf("rowsAhead(%s, %d) = %v, want %v", gemvSiteNames[c.site], c.nb, got, c.want)
		}
	}
	gemvAhead = parseGemvAhead("0")
	if rowsAhead(siteTower, 8) {
		t.Error("rowsAhead with every site off")
	}
}

// TestGemvRowsAheadTwins: GemvRowsBF16 launches gemvxa_bf16_<name> for a
// fast projection with WeightsAhead, so kernels/gemv.cu must compile that
// twin of every gemvx_bf16_ instance (GEMV_ROWS_BF16 does).
func TestGemvRowsAheadTwins(t *testing.T) {
	for _, k := range kernel.GemvxBF16Kernels {
		twin := kernel.GemvxaBF16Kernel(strings.Replace(string(k), "gemvx_", "gemvxa_", 1))
		if !slices.Contains(kernel.GemvxaBF16Kernels, twin) {
			t.Errorf("%s has no %s", k, twin)
		}
	}
	if len(kernel.GemvxaBF16Kernels) != len(kernel.GemvxBF16Kernels) {
		t.Errorf("%d gemvxa_bf16 instances for %d gemvx_bf16 ones", len(kernel.GemvxaBF16Kernels), len(kernel.GemvxBF16Kernels))
	}
}

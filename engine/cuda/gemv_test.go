package cuda

import (
	"errors"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

func TestChooseGemvPicksACompiledInstance(t *testing.T) {
	for _, fp8 := range []bool{false, true} {
		list := GemvBF16Variants
		if fp8 {
			list = GemvFP8Variants
		}
		for _, s := range [][3]int{{8192, 2048, 1}, {2048, 4096, 1}, {512, 2048, 8}, {2048, 512, 8}, {3, 16, 1}} {
			v := ChooseGemv(fp8, s[0], s[1], s[2])
			if !slices.Contains(list, v) {
				t.Errorf("ChooseGemv(fp8=%v, %v) = %s, not an instance in kernels/gemv.cu", fp8, s, v.Name())
			}
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

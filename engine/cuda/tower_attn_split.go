package cuda

import (
	"fmt"
	"strconv"
)

// towerAttn is how a tower frame row's attention splits its cached keys
// across blocks ($PROSCENIUM_GPU_TOWER_ATTN), by the launch's rows.
//
// kernels/attention.cu has two kinds of instance: the wide ones (any head up
// to 256 dims) run every one of the 16 key splits, a key a warp at a time;
// the _h128 ones (heads of up to 128 dims) take ⌈cache rows / rows a split⌉
// splits, eight keys loaded at once a warp, and a cache within one split
// needs no merge. Measured at Drama 3's geometry (docs/PERF.md "Session
// 29", run 4's sweep, and "Session 32", three rows): at one and two rows
// the wide instances' many blocks win; from three, the _h128 ones with 128
// rows a split (fast; exact: choose).
type towerAttn struct {
	byWidth bool // the measured rule (towerAttnFewFrom, towerAttnKeys); else few and keys at every width
	few     bool // the _h128 instances
	keys    int  // their rows a split (0: kernel.AttnWarps × 8 = 64, one pass of a block)
}

const (
	// towerAttnFewFrom is the launch's rows from which the rule takes the
	// _h128 instances (measured at 1, 2, 3, 4 and 8 rows).
	towerAttnFewFrom = 3
	// towerAttnKeys is their rows a split there (swept: 8, 16, 32, 64, 128).
	towerAttnKeys = 128
)

// choose says which instances a launch of n frame rows (one take's, or n
// takes' together) runs, and the _h128 ones' rows a split; heads wider than
// 128 dims take the wide ones whatever was asked. Under exact the rule
// takes the same instances at every width (the _h128 ones, 64 rows a
// split): the two sum a row's keys in different orders, and exact keeps a
// take's bits the same alone and in a batch.
func (a towerAttn) choose(n, headDim int, exact bool) (few bool, keys int) {
	few, keys = a.few, a.keys
	switch {
	case a.byWidth && exact:
		few, keys = true, 0
	case a.byWidth:
		few, keys = n >= towerAttnFewFrom, towerAttnKeys
	}
	return few && headDim <= 128, keys
}

// parseTowerAttn reads $PROSCENIUM_GPU_TOWER_ATTN (benchmarks), as the
// tower's other switches refusing a value it does not know: unset, the rule
// by width; "few", the _h128 instances at every width with 64 rows a split
// (session 28's default); a number K (1…65536), those with K rows a split at
// every width; "wide", the wide instances at every width.
func parseTowerAttn(s string) (towerAttn, error) {
	switch s {
	case "":
		return towerAttn{byWidth: true}, nil
	case "few":
		return towerAttn{few: true}, nil
	case "wide":
		return towerAttn{}, nil
	}
	if k, err := strconv.Atoi(s); err == nil && k >= 1 && k <= 1<<16 {
		return towerAttn{few: true, keys: k}, nil
	}
	return towerAttn{}, fmt.Errorf("PROSCENIUM_GPU_TOWER_ATTN=%q: want few, wide or the cached rows a split (1…65536)", s)
}

package cuda

import (
	"fmt"
	"strconv"
)

// towerAttn is how a tower frame row's attention splits its cached keys
// across blocks ($PROSCENIUM_GPU_TOWER_ATTN).
type towerAttn struct {
	// few runs kernels/attention.cu's _h128 instances (heads of up to 128
	// dims): as few splits as the cache needs, eight keys loaded at once a
	// warp. Otherwise ("wide") every split, a key a warp at a time (the
	// instances for any head up to 256 dims).
	few bool
	// keys forces the cached rows a split of the _h128 instances at every
	// width (benchmarks); 0: towerAttnKeys by the launch's rows.
	keys int
}

// splitKeys is the cached rows a split of a launch of n frame rows (one
// take's, or n takes' together).
func (a towerAttn) splitKeys(n int) int {
	if a.keys > 0 {
		return a.keys
	}
	return towerAttnKeys(n)
}

// towerAttnKeys is the rows a split the _h128 instances take at n frame
// rows a launch: a block's one pass (kernel.AttnWarps warps × 8 keys) at
// every width.
func towerAttnKeys(n int) int {
	return 64
}

// parseTowerAttn reads $PROSCENIUM_GPU_TOWER_ATTN (benchmarks), as the
// tower's other switches refusing a value it does not know: unset or "few",
// the _h128 instances with towerAttnKeys; a number K (1…65536), those with K
// cached rows a split at every width; "wide", the instances with every split.
func parseTowerAttn(s string) (towerAttn, error) {
	switch s {
	case "", "few":
		return towerAttn{few: true}, nil
	case "wide":
		return towerAttn{}, nil
	}
	if k, err := strconv.Atoi(s); err == nil && k >= 1 && k <= 1<<16 {
		return towerAttn{few: true, keys: k}, nil
	}
	return towerAttn{}, fmt.Errorf("PROSCENIUM_GPU_TOWER_ATTN=%q: want few, wide or the cached rows a split (1…65536)", s)
}

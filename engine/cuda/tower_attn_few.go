package cuda

import "fmt"

// parseTowerAttnFew reads $PROSCENIUM_GPU_TOWER_ATTN (benchmarks), as the
// tower's other switches refusing a value it does not know: unset or "few",
// a frame row's attention on as few key splits as its cache needs, eight
// keys loaded at once a warp (kernels/attention.cu's _h128 instances, heads
// of up to 128 dims: Tower.attnFew); "wide", every split, a key a warp at a
// time (the instances for any head up to 256 dims).
func parseTowerAttnFew(s string) (bool, error) {
	switch s {
	case "", "few":
		return true, nil
	case "wide":
		return false, nil
	}
	return false, fmt.Errorf("PROSCENIUM_GPU_TOWER_ATTN=%q: want few or wide", s)
}

package cuda

import (
	"fmt"
	"sort"
	"strings"
)

// prefillSwitches are the prefill kernel switches a benchmark may flip
// inside one process (SetPrefillSwitch), each its variable and its check.
// Flipping between runs of one process compares the choices on the same
// weights at the same addresses: separate processes of bench-backbone
// running the same mixer kernels differed by 1.2 ms in a 300-row prefill
// without its MoE (session 16, run 2), more than most choices move it.
var prefillSwitches = map[string]struct {
	v     *string
	check func(string) error
}{
	AttnMMAEnv:          {&attnMMA, AttnMMASetting},
	DeltaNetPrepEnv:     {&deltaNetPrep, DeltaNetPrepSetting},
	GemmStreamSwiGLUEnv: {&gemmStreamSwiGLU, GemmStreamSwiGLUSetting},
	GemmStreamEnv:       {&gemmStream, GemmStreamSetting},
	GemmXPartsEnv:       {&gemmXParts, GemmXPartsSetting},
	GemmSplitKEnv:       {&gemmSplitK, gemmSplitKSetting},
	GemmTilesEnv:        {&gemmTiles, gemmTilesSetting},
}

// SetPrefillSwitch sets switch env (one of PrefillSwitches) to v for the
// launches enqueued after it, as the variable would at start-up. Call it
// between runs, not while another goroutine enqueues.
func SetPrefillSwitch(env, v string) error {
	if err := CheckPrefillSwitch(env, v); err != nil {
		return err
	}
	*prefillSwitches[env].v = v
	return nil
}

// CheckPrefillSwitch reports whether v is a value of prefill switch env
// (one of PrefillSwitches), changing nothing.
func CheckPrefillSwitch(env, v string) error {
	s, ok := prefillSwitches[env]
	if !ok {
		return fmt.Errorf("cuda: %s is not a prefill switch (%s)", env, strings.Join(PrefillSwitches(), ", "))
	}
	return s.check(v)
}

// gemmTilesSetting checks a value of $PROSCENIUM_GPU_GEMM_TILES.
func gemmTilesSetting(v string) error {
	switch v {
	case "", "31", "main":
		return nil
	}
	return fmt.Errorf("cuda: %s=%q: want 31 or main", GemmTilesEnv, v)
}

// PrefillSwitches lists the switches SetPrefillSwitch takes.
func PrefillSwitches() []string {
	var names []string
	for n := range prefillSwitches {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

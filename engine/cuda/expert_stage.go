package cuda

import (
	"fmt"
	"math"
)

// This file is the host arithmetic of routed staging (expert_stage_cuda.go):
// which experts a prefill pass's rows route to, and the runs of them the
// stage still lacks, each run one copy per matrix.

// routedSet marks the experts ids route to (a pass's routing, top-k a row).
// An id outside [0, experts) is an error: the routing kernel's output is
// not what it should be, and copying by it would leave experts off the stage.
func routedSet(ids []int32, experts int) ([]bool, error) {
	used := make([]bool, experts)
	for i, e := range ids {
		if e < 0 || int(e) >= experts {
			return nil, fmt.Errorf("routing: pair %d routes to expert %d of %d", i, e, experts)
		}
		used[e] = true
	}
	return used, nil
}

// expertRuns is the runs [from, to) of consecutive experts that want names
// and has lacks, in order: what a routed staging copies, one copy per run
// and matrix.
func expertRuns(want, has []bool) [][2]int {
	var runs [][2]int
	for e := 0; e < len(want); e++ {
		if !want[e] || has[e] {
			continue
		}
		from := e
		for e+1 < len(want) && want[e+1] && !has[e+1] {
			e++
		}
		runs = append(runs, [2]int{from, e + 1})
	}
	return runs
}

// countTrue is how many of b are true.
func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// routedStagingPays says whether a prefill pass of n rows that would read
// each (row, expert) pair's expert in place carries fewer expert bytes over
// the bus with routed staging, by the near-uniform routing of random
// weights (the worst case for it): each of its non-home host layers
// (hostLayers less the home one) then carries the E·(1 − (1 − k/E)^n)
// experts its rows route to, where in place it carries min(n·k, E);
// against that saving, the home layer, which routed staging overwrites on
// the stage, is copied back whole (E experts) for the decode steps. A trained router that concentrates its rows saves more than this
// counts; the rule does not take routed staging where it would cost more
// on uniform routing.
func routedStagingPays(n, k, experts, hostLayers int) bool {
	if n < 2 || k < 1 || experts < 1 || hostLayers < 2 {
		return false
	}
	E := float64(experts)
	routed := E * (1 - math.Pow(1-float64(k)/E, float64(n)))
	without := math.Min(float64(n*k), E)
	return float64(hostLayers-1)*(without-routed) > E
}

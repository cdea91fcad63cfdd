package cuda

import "os"

// A step's routing published ahead of the expert kernels' PDL wait
// (kernels/moe.cu route_publish, route_guess; docs/PERF.md "route21").
// The kernel that routes a step's rows (moe_route at B rows, the routed
// gate·up at one) counts each row's published ids on a word of the layer
// and zeroes the previous layer's; the kernels that read experts by those
// ids (the gate·up by ids, the down projections) poll the word before their
// wait and load their first weights there, so those stream while the
// kernel before them still runs. Each reads its id again after the wait:
// the early guess moves time, never values. Fast numerics with the experts
// in the packed layout only (no expert table: its words may move between
// frames); exact's kernels never poll.

// routeAhead: on unless $PROSCENIUM_GPU_ROUTE_AHEAD is "0" (read when a
// step is captured).
var routeAhead = os.Getenv("PROSCENIUM_GPU_ROUTE_AHEAD") != "0"

// routeWord is the index, among the plan's Counters, of layer i's routing
// word: after the fused step's counters, one a layer, zero between steps
// but the last layer's (the first layer's routing zeroes it).
func (p *BackbonePlan) routeWord(i int) int { return counterHeads + p.headCounters() + i }

package main

import (
	"math"
	"strings"
	"testing"

	"proscenium/engine/cpu"
	"proscenium/engine/cuda"
	"proscenium/engine/drama3"
)

// ulp1 is float32's spacing just above 1: two router logits this far
// apart are as near a tie as float32 can tell.
const ulp1 = float32(1.0 / (1 << 23))

// route is a layer's routing: experts chosen, and router logits of four
// experts (the rest of each at −5).
func route(experts []int32, l1, l2 float32) cuda.StepRoute {
	return cuda.StepRoute{Experts: experts, Logits: []float32{3, l1, l2, -5}}
}

// TestRouteDiffers holds one layer's comparison to each case: the same
// experts in another order (no parting); a swap of the k-th and next expert
// whose logits alone lay within twice the two runs' router difference (a
// tie, up to exactly twice); against its own logits for a margin just past
// twice, for the same swap on the same logits to their bits, also where the
// two are equal (ties go to the lower index), for a wide margin, or ids out
// of the router's range; neither where the router logits are apart beyond
// rounding (the inputs had parted before).
func TestRouteDiffers(t *testing.T) {
	one := 1 + 2*ulp1
	for _, tc := range []struct {
		name         string
		a, b         cuda.StepRoute
		nilP         bool
		tie, against bool
		check        func(t *testing.T, p *routeParting)
	}{
		{name: "order only", a: route([]int32{0, 1}, 2, 1), b: route([]int32{1, 0}, 2, 1), nilP: true},
		{name: "swap at a tie", a: route([]int32{0, 1}, one, 1), b: route([]int32{0, 2}, 1, one), tie: true,
			check: func(t *testing.T, p *routeParting) {
				if p.AloneOnly[0] != 1 || p.BatchedOnly[0] != 2 || math.Abs(p.Margin-float64(2*ulp1)) > 1e-12 || math.Abs(p.Diff-float64(2*ulp1)) > 1e-12 {
					t.Fatalf("%+v", p)
				}
			}},
		{name: "swap on the same logits", a: route([]int32{0, 1}, one, 1), b: route([]int32{0, 2}, one, 1), against: true},
		{name: "equal logits, the other expert", a: route([]int32{0, 1}, 1, 1), b: route([]int32{0, 2}, 1, 1), against: true},
		{name: "margin at twice the difference", a: route([]int32{0, 1}, 1+2*ulp1, 1), b: route([]int32{0, 2}, 1+ulp1, 1+ulp1), tie: true},
		{name: "margin just past twice the difference", a: route([]int32{0, 1}, 1+4*ulp1, 1), b: route([]int32{0, 2}, 1+3*ulp1, 1+ulp1), against: true},
		{name: "swap past a wide margin", a: route([]int32{0, 1}, 2, 1), b: route([]int32{0, 2}, 2-1e-6, 1+1e-6), against: true},
		{name: "router logits far apart", a: route([]int32{0, 1}, 1.5, 1), b: route([]int32{0, 2}, 1, 1.5)},
		{name: "ids out of range", a: route([]int32{0, 1}, one, 1), b: route([]int32{0, 9}, 1, one), against: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := routeDiffers(tc.a, tc.b)
			if tc.nilP {
				if p != nil {
					t.Fatalf("a parting where the sets agree: %+v", p)
				}
				return
			}
			if p == nil || p.Tie != tc.tie || p.Against != tc.against {
				t.Fatalf("want a parting, tie %v, against its logits %v: %+v", tc.tie, tc.against, p)
			}
			if tc.check != nil {
				tc.check(t, p)
			}
		})
	}
}

// steps is a log of steps' routing alone.
func steps(m map[int][]cuda.StepRoute) routesLog { return routesLog{steps: m} }

// TestFirstRouteParting: the first prompt row, then the first frame (in
// row and frame order, not the maps'), and the first layer at which two
// runs chose differently, over the rows and frames both logged.
func TestFirstRouteParting(t *testing.T) {
	same := []cuda.StepRoute{route([]int32{0, 1}, 2, 1), route([]int32{0, 1}, 2, 1)}
	swapped := []cuda.StepRoute{route([]int32{0, 1}, 2, 1), route([]int32{0, 2}, 1, 2)}
	alone := steps(map[int][]cuda.StepRoute{1: same, 2: same, 3: same, 4: same})
	batched := steps(map[int][]cuda.StepRoute{1: same, 2: same, 3: swapped, 4: swapped, 9: swapped})
	p, rows, n := firstRouteParting(alone, batched)
	if p == nil || p.Frame != 3 || p.PromptRow != -1 || p.Layer != 1 || rows != 0 || n != 4 {
		t.Fatalf("%+v over %d rows, %d frames", p, rows, n)
	}
	if p, _, n := firstRouteParting(alone, alone); p != nil || n != 4 {
		t.Fatalf("%+v over %d frames", p, n)
	}
	if p, rows, n := firstRouteParting(routesLog{}, routesLog{}); p != nil || rows != 0 || n != 0 {
		t.Fatalf("%+v over %d rows, %d frames", p, rows, n)
	}
	// A prompt row's parting comes before every step's, the first row's.
	alone.prompt = map[int][]cuda.StepRoute{0: same, 1: same, 2: same, 3: same}
	batched.prompt = map[int][]cuda.StepRoute{0: same, 1: same, 2: swapped, 3: swapped, 7: swapped}
	p, rows, n = firstRouteParting(alone, batched)
	if p == nil || p.Frame != 0 || p.PromptRow != 2 || p.Layer != 1 || rows != 4 || n != 4 {
		t.Fatalf("%+v over %d rows, %d frames", p, rows, n)
	}
	if !strings.Contains(p.String(), "routing parts at prompt row 2 layer 1") {
		t.Fatal(p)
	}
}

// TestCompareTakesRouting holds -near-ties' classes with the routing
// logged: a parting after the logits left the tolerance is a routing
// near-tie where the routing parted at a tie no later than that; after it,
// or on router logits already apart beyond rounding, not (still "off the
// tolerance"); routing that parted against its own logits fails the
// verdict, also where the codes stayed the same.
func TestCompareTakesRouting(t *testing.T) {
	vec := func(hot int, v float32) []float32 {
		l := []float32{-8, -8, -8, -8, -8, -8}
		l[hot] = v
		return l
	}
	codes := [][]int{{1, 2}, {3, 4}}
	logs := func(cs [][]int) drama3.LogitsLog {
		l := drama3.LogitsLog{}
		for f := range cs {
			for c := range cs[f] {
				l.Tap(f, c, vec(cs[f][c], 2))
			}
		}
		return l
	}
	one := 1 + 2*ulp1
	same := []cuda.StepRoute{route([]int32{0, 1}, one, 1)}
	tie := []cuda.StepRoute{route([]int32{0, 2}, 1, one)}
	against := []cuda.StepRoute{route([]int32{0, 2}, one, 1)}
	far := []cuda.StepRoute{route([]int32{0, 2}, 1, 1.5)}
	// promptWith is a five-row prompt's routing, row r's parted (r −1: none).
	promptWith := func(r int, parted []cuda.StepRoute) map[int][]cuda.StepRoute {
		m := map[int][]cuda.StepRoute{}
		for i := range 5 {
			m[i] = same
			if i == r {
				m[i] = parted
			}
		}
		return m
	}
	// Alone codes; batched: frame 1's second draw parts (4 or 5 on logits
	// moved by 1e-2, from frame 1 on: a near-tie only on that moved bound).
	other := [][]int{{1, 2}, {3, 5}}
	al, bl := logs(codes), logs(codes)
	bl.Tap(1, 0, vec(3, 2.02))
	al.Tap(1, 1, []float32{-8, -8, -8, -8, 2, 2 - 1e-3})
	bl.Tap(1, 1, []float32{-8, -8, -8, -8, 2 - 1e-2, 2})
	take := func(cs [][]int, l drama3.LogitsLog, r routesLog) takeRun {
		return takeRun{codes: cs, logits: l, routes: r}
	}
	for _, tc := range []struct {
		name    string
		b       [][]int
		br      routesLog
		class   string
		verdict bool
		says    string // in the finding's line
	}{
		{"routing tie at the frame the logits left", other, steps(map[int][]cuda.StepRoute{1: tie}), cpu.RoutingNearTie, true, "routing parts at frame 1 layer 0 (alone [1], batched [2])"},
		{"no routing parting", other, steps(map[int][]cuda.StepRoute{1: same}), takeOffTolerance, true, "the same routing over 5 prompt rows and 1 frames' steps"},
		{"routing tie after the logits left", other, steps(map[int][]cuda.StepRoute{1: same, 2: tie}), takeOffTolerance, true, "routing parts at frame 2 layer 0"},
		{"routing against its logits", other, steps(map[int][]cuda.StepRoute{1: against}), cpu.Unexplained, false, "against its own logits"},
		{"same codes, routing against its logits", codes, steps(map[int][]cuda.StepRoute{1: against}), cpu.Unexplained, false, "against its own logits"},
		{"same codes, routing tie", codes, steps(map[int][]cuda.StepRoute{1: tie}), takeIdentical, true, "at a tie of the router"},
		{"routing on router logits apart beyond rounding", other, steps(map[int][]cuda.StepRoute{1: far}), takeOffTolerance, true, "the router's logits apart beyond rounding"},
		// A prompt row's routing moves every frame from 0 on: a tie there
		// explains logits that leave the tolerance at any frame.
		{"routing tie at a prompt row", other, routesLog{prompt: promptWith(3, tie), steps: map[int][]cuda.StepRoute{1: same}}, cpu.RoutingNearTie, true, "routing parts at prompt row 3 layer 0"},
		{"a prompt row against its logits", codes, routesLog{prompt: promptWith(4, against), steps: map[int][]cuda.StepRoute{1: same}}, cpu.Unexplained, false, "prompt row 4 layer 0 (alone [1], batched [2]): margin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.br.prompt == nil {
				tc.br.prompt = promptWith(-1, nil)
			}
			r := compareTakes(4, 1, 4, take(codes, al, routesLog{prompt: promptWith(-1, nil), steps: map[int][]cuda.StepRoute{1: same, 2: same}}), take(tc.b, bl, tc.br))
			if r.Class != tc.class || r.FirstOff != 1 || r.RoutesFrames == 0 {
				t.Fatalf("class %q, want %q: %+v", r.Class, tc.class, r)
			}
			if err := nearTiesVerdict([]nearTieTake{r}, false); (err == nil) != tc.verdict {
				t.Fatalf("verdict %v, want passing %v", err, tc.verdict)
			}
			if !strings.Contains(r.String(), tc.says) {
				t.Fatalf("the line does not say %q: %s", tc.says, r)
			}
			if nearTiesVerdict([]nearTieTake{r}, true) == nil {
				t.Fatal("under exact a take whose logits moved passed")
			}
		})
	}
	r := compareTakes(4, 1, 4, take(codes, al, steps(map[int][]cuda.StepRoute{1: same})), take(other, bl, steps(map[int][]cuda.StepRoute{1: tie})))
	if got := nearTiesTally([]nearTieTake{r}); !strings.Contains(got, "1 parted after a routing near-tie") || !strings.Contains(got, "routing logged for 1, parted at a tie of the router in 1") {
		t.Fatal(got)
	}
}

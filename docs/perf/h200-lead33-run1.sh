#!/bin/bash
# Lead, session 33, run 1 (one call, ≤ 260 s; the steps in order of need, as far as the budget goes), on main
# with the routing log (bench-take -near-ties -routes, the default: every step copies each layer's router logits and
# chosen experts; a take's routing in a batch is compared with its routing alone):
# 1. the tower's tests with the attention's rule from three rows (session 32), the takes together against alone and
#    the routing log's test (TestTakeFramesRoutes), fast and exact; the engine's tests with the mended units test;
# 2. -near-ties at four and eight takes, fast, routing logged: where run 1 of session 32 saw logits jump by 1e-2
#    before a parting (by elimination a routing flip), the log shows the step, the layer, the swapped experts and
#    the router's margin against its two runs' difference; then exact at four (routing to the bit);
# 3. the same with every router zeroed (-hot-experts: no routing can flip): no jump left;
# 4. the tower as built at 1, 2, 3, 4, 8 rows from 60 and 300 cache rows, twice;
# 5. three takes at once (and two) as built against the wide attention forced, alternating, twice; -near-ties at three.
# Carried: .carry-fa (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run1 260 .carry-fa
F='^(TestTowerFrames|TestTowerFrameRows|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTowerPromptRows|TestTowerAttnChoose|TestTakeFramesRoutes)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine|TestCompareTakes|TestBenchJSONSaysItsUnits|TestRouteDiffers|TestFirstRouteParting') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
NT="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties"
T 60 ties-48 $P $NT -batch 4,8 -numerics fast
T 40 ties-exact $P $NT -batch 4 -numerics exact
T 50 ties-hot $P $NT -batch 4,8 -hot-experts -numerics fast
for i in 1 2; do for p in 60 300; do
	T 10 tw-$p-$i $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill $p
done; done
T 40 ties-3 $P $NT -batch 3 -numerics fast
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 2,3 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 30 take-rule-$i $P $TK
	T 30 take-wide-$i env PROSCENIUM_GPU_TOWER_ATTN=wide $P $TK
done
run_pack
run_tally tests-exact tests-fast engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
grep -h "TestTakeFramesRoutes\|numerics: take" $O/tests-*.log | head -16
for f in ties-48 ties-exact ties-hot ties-3; do echo "-- $f"; grep -hE "^near-ties|^routes|^batch|rror" $O/$f.log | cut -c1-600; done
for i in 1 2; do for p in 60 300; do echo "-- tw $p $i: $(grep -h '^takes' $O/tw-$p-$i.log | cut -c1-40 | tr '\n' ';')"; done; done
for i in 1 2; do for k in rule wide; do echo "-- take $k $i"; grep -hE "^batch [23]" $O/take-$k-$i.log | cut -c1-300; done; done

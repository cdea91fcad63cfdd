#!/bin/bash
# Lead, session 34, run 1 (one call, ≤ 300 s), on main with the routing log of prefill passes (session 33's log and
# review ran only on H100s): the new log's checks, the notebook's H200 figures at this code, what session 33 left.
# 1. TestTakeFramesRoutes under fast and exact (now: every prompt row logged, a joint prefill's routing against alone's,
#    to the bit under exact), the tool's host tests and units; -near-ties at 4 and 8 takes (fast) and 4 (exact), the
#    prompt rows compared before the steps;
# 2. the take (B = 1, 4; six takes, two rounds), two, three and eight takes at once, exact's take, the step at
#    1, 2, 4, 8 rows and the tower at 1, 2, 3, 4, 8 rows from 60 and 300 cache rows, twice: the Current figures' rows;
# 3. two and three takes at once as built against the wide attention forced, alternating, twice (session 33 run 2).
# Carried: .carry-fa (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run1 300 .carry-fa
F='^(TestTakeFramesRoutes|TestTakeFramesMatchAlone)$'
(cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCompareTakes|TestBenchJSONSaysItsUnits|TestRouteDiffers|TestFirstRouteParting') &
(cd engine/cuda && T 60 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
NT="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties"
T 60 ties-48 $P $NT -batch 4,8 -numerics fast
T 40 ties-exact $P $NT -batch 4 -numerics exact
T 45 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 40 take-238 $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 2,3,8 -seed-base 3 -numerics fast
T 25 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics exact
for i in 1 2; do
	T 10 rows-$i $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
	for p in 60 300; do T 10 tw-$p-$i $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill $p; done
done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 2,3 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 30 take-rule-$i $P $TK
	T 30 take-wide-$i env PROSCENIUM_GPU_TOWER_ATTN=wide $P $TK
done
run_pack
cat $O/machine.txt
run_tally tests-fast tests-exact engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
grep -h "numerics: take" $O/tests-*.log | head -12
for f in ties-48 ties-exact; do echo "-- $f"; grep -hE "^near-ties|^routes|^batch|rror" $O/$f.log | cut -c1-600; done
for f in take take-238 take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |batch [1-8]|backbone step|device memory|held" $O/$f.log | cut -c1-200; done
for i in 1 2; do echo "-- rows $i: $(grep -hE '^B =' $O/rows-$i.log | cut -c1-60 | tr '\n' ' ')"; done
for i in 1 2; do for p in 60 300; do echo "-- tw $p $i: $(grep -h '^takes' $O/tw-$p-$i.log | cut -c1-40 | tr '\n' ';')"; done; done
for i in 1 2; do for k in rule wide; do echo "-- take $k $i"; grep -hE "^batch [23]" $O/take-$k-$i.log | cut -c1-300; done; done

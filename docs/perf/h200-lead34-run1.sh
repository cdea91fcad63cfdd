#!/bin/bash
# Lead, session 34, run 1 (one call, ≤ 300 s), on main bd0570b (session 33's final code: the routing log and its
# review, run only on H100s so far): the notebook's H200 figures at this code, and what session 33 left unmeasured.
# 1. TestTakeFramesRoutes under fast and exact (the routing log's device test; run 1 of session 33 ran it on an H100);
# 2. the take (B = 1, 4; six takes, two rounds), two, three and eight takes at once, exact's take, the step at
#    1, 2, 4, 8 rows and the tower at 1, 2, 3, 4, 8 rows from 60 and 300 cache rows, twice: the Current figures' rows;
# 3. two and three takes at once as built against the wide attention forced, alternating, twice (session 33 run 2);
# 4. -near-ties at four and eight takes, fast, routing logged.
# Carried: .carry-fa (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run1 300 .carry-fa
F='^(TestTakeFramesRoutes|TestTakeFramesMatchAlone)$'
(cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 60 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
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
T 60 ties-48 $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties -batch 4,8 -numerics fast
run_pack
cat $O/machine.txt
run_tally tests-fast tests-exact
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
grep -h "TestTakeFramesRoutes" $O/tests-*.log | head -8
for f in take take-238 take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio  |  frame  |batch [1-8]|backbone step|device memory|held" $O/$f.log | cut -c1-200; done
for i in 1 2; do echo "-- rows $i: $(grep -hE '^B =' $O/rows-$i.log | cut -c1-60 | tr '\n' ' ')"; done
for i in 1 2; do for p in 60 300; do echo "-- tw $p $i: $(grep -h '^takes' $O/tw-$p-$i.log | cut -c1-40 | tr '\n' ';')"; done; done
for i in 1 2; do for k in rule wide; do echo "-- take $k $i"; grep -hE "^batch [23]" $O/take-$k-$i.log | cut -c1-300; done; done
echo "-- ties-48"; grep -hE "^near-ties|^routes|^batch|rror" $O/ties-48.log | cut -c1-420

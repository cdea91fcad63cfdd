#!/bin/bash
# Lead, session 34, run 2 (one call, ≤ 200 s), on main with the prefill routing log's 2D copy by the driver (run 1's
# copy through gorgonia.org/cu panicked on its nil CUDA arrays, so none of the new log ran):
# 1. TestCopyRows, TestTakeFramesRoutes (every prompt row logged, a joint prefill's routing against alone's, to the bit
#    under exact) and TestTakeFramesMatchAlone, fast and exact;
# 2. -near-ties at 4 and 8 takes (fast) and 4 (exact): the prompt rows compared before the steps;
# 3. the same, routers zeroed (-hot-experts): no routing parts, prompt rows included.
# Carried: .carry-fa (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run2 200 .carry-fa
F='^(TestCopyRows|TestTakeFramesRoutes|TestTakeFramesMatchAlone)$'
(cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 60 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
NT="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties"
T 60 ties-48 $P $NT -batch 4,8 -numerics fast
T 40 ties-exact $P $NT -batch 4 -numerics exact
T 50 ties-hot $P $NT -batch 4,8 -hot-experts -numerics fast
run_pack
cat $O/machine.txt
run_tally tests-fast tests-exact
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
grep -h "numerics: take\|panic" $O/tests-*.log | head -14
for f in ties-48 ties-exact ties-hot; do echo "-- $f"; grep -hE "^near-ties|^routes|^batch|rror|panic" $O/$f.log | cut -c1-600; done

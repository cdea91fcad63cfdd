#!/bin/bash
# Lead, session 34, run 4 (one call, ≤ 200 s), on main after the review: the routing log's steps and passes share one
# buffer type (ids and router logits [rows][layers], copied in by CopyRows — the step graph's copies are 2D now —
# read back in two copies):
# 1. TestCopyRows, TestTakeFramesRoutes, TestTakeFramesMatchAlone, fast and exact;
# 2. -near-ties at 4 and 8 takes (fast) and 4 (exact): run 2's findings expected;
# 3. the take at B = 1 and 4, fast (the log not kept: the product's path).
# Carried: .carry-fa (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run4 200 .carry-fa
F='^(TestCopyRows|TestTakeFramesRoutes|TestTakeFramesMatchAlone)$'
(cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 60 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
NT="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties"
T 60 ties-48 $P $NT -batch 4,8 -numerics fast
T 40 ties-exact $P $NT -batch 4 -numerics exact
T 30 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -batch 1,4 -seed-base 3 -numerics fast
run_pack
cat $O/machine.txt
run_tally tests-fast tests-exact
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
grep -h "numerics: take\|panic" $O/tests-*.log | head -14
for f in ties-48 ties-exact; do echo "-- $f"; grep -hE "^near-ties|^batch|rror|panic" $O/$f.log | cut -c1-330; done
echo "-- take"; grep -hE "^take|takes after|first audio  |backbone step|batch [14]" $O/take.log | cut -c1-250

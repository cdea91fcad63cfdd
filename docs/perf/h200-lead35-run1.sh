#!/bin/bash
# Lead, session 35 (written without a device: none was lent that session), run 1 (one call, ≤ 330 s), for the next
# session that is lent an H200. Two things no H200 has run yet:
# 1. the routing log's final code (session 34's review, 8ece9d6: ran on an H100 only, run 4): TestCopyRows,
#    TestTakeFramesRoutes, TestTakeFramesMatchAlone, fast and exact, and -near-ties at 4 and 8 takes (fast) and 4
#    (exact): session 34 run 2's findings expected (fast B = 4: 1 identical / 2 draw / 1 routing; B = 8: 4 / 2 / 2;
#    exact: 4 identical; 0 unexplained);
# 2. an ncu profile of today's step at one and four rows and of the tower frame (PERF "What bounds the step": "What
#    was not tried … an ncu profile of the final step"; the last, route21's, is of 07c1dd4), each kernel alone with
#    its launch (`--graph-profiling node`), durations and DRAM bytes, summed by docs/perf/ncu-agg.py;
# then the Current figures' rows (the take at B = 1 and 4, the step at 1, 2, 4, 8 rows, the tower at 1, 2, 3, 4, 8).
# Carried: .carry-fa (h200-lead6-build.sh on main). Check the reply's device first: an H100's figures stay out of
# the H200 table.
set -u
. docs/perf/run-lib.sh
run_setup run1 330 .carry-fa
F='^(TestCopyRows|TestTakeFramesRoutes|TestTakeFramesMatchAlone)$'
(cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 60 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
NT="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties"
T 60 ties-48 $P $NT -batch 4,8 -numerics fast
T 40 ties-exact $P $NT -batch 4 -numerics exact
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv --graph-profiling node"
T 50 ncu-step $NCU $M $P bench-backbone -synthetic full -profile-step -numerics fast
T 50 ncu-rows4 $NCU $M $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
T 40 ncu-tower $NCU $M $P bench-tower -synthetic full -profile-frame
T 45 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 10 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 10 tw $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill 60
run_pack
cat $O/machine.txt
echo "== steps: $(grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' ')"
run_tally tests-fast tests-exact
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
grep -h "numerics: take\|panic" $O/tests-*.log | head -14
for f in ties-48 ties-exact; do echo "-- $f"; grep -hE "^near-ties|^routes|^batch|rror|panic" $O/$f.log | cut -c1-400; done
for f in ncu-step ncu-rows4 ncu-tower; do echo "-- $f"; python3 docs/perf/ncu-agg.py $O/$f.log 2>&1 | head -30; done
echo "-- take"; grep -hE "^take|takes after|first audio  |  frame  |batch [14]|backbone step|device memory" $O/take.log | cut -c1-220
echo "-- rows: $(grep -hE '^B =' $O/rows.log | cut -c1-60 | tr '\n' ' ')"
echo "-- tower: $(grep -h '^takes' $O/tw.log | cut -c1-40 | tr '\n' ';')"

#!/bin/bash
# Lead, session 36, run 3 (one call, ≤ 120 s), only on an H200 (on any other card it stops at once): the routing
# log's final code (session 34's review, 8ece9d6; run on H100s only: session 34 run 4, session 36 run 1) — its tests
# under fast and exact and -near-ties at four and eight takes (fast) and four (exact), run 1's findings expected.
# Carried: .carry-fa (h200-lead6-build.sh on main).
set -u
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader)"; exit 0; }
. docs/perf/run-lib.sh
run_setup run3 120 .carry-fa
F='^(TestCopyRows|TestTakeFramesRoutes|TestTakeFramesMatchAlone)$'
(cd engine/cuda && T 30 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 30 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
NT="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties"
T 50 ties-48 $P $NT -batch 4,8 -numerics fast
T 30 ties-exact $P $NT -batch 4 -numerics exact
run_pack
cat $O/machine.txt
echo "== steps: $(grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' ')"
run_tally tests-fast tests-exact
for f in ties-48 ties-exact; do echo "-- $f"; grep -hE "^near-ties: |^batch|rror|panic" $O/$f.log | cut -c1-300; done

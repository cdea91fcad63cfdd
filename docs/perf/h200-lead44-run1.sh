#!/bin/bash
# Lead, session 44, run 1 (one call, ≤ 540 s or $BUDGET): what sessions 42 and 43 left unrun on a GPU, on session 43's
# final code (bda2516's bundles: the same code as a97f6de). In order, so that a short budget leaves out the last:
# the whole check (run-lib.sh: fast and exact, the forced tensor-core attention, the engine's tests, the agreement
# with the CPU; session 43 ran its first 86 s only); the step and the tower under exact (session 42 ran exact in the
# take bench only); on an H200, the Current figures' take, step and tower benches (table_benches).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh at bda2516).
set -u
. docs/perf/run-lib.sh
run_setup run1 ${BUDGET:-540} .carry-fa .carry-fb
whole_check_tests
run_whole_check
T 20 rows-exact $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics exact
T 20 tw-exact $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill 60 -numerics exact
table_benches
run_pack
cat $O/machine.txt; cat $O/steps.log
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
agreement_report
echo "-- rows exact: $(grep -hE '^B =' $O/rows-exact.log | cut -c1-80 | tr '\n' ' ')"
echo "-- tower exact: $(grep -h '^takes' $O/tw-exact.log | cut -c1-60 | tr '\n' ';')"
table_report

#!/bin/bash
# Lead, session 23, run 4 (one call, ≤ 120 s): TestMoEDownRowsMatchesOneRow as mended (the B-row routed down on
# the tensor cores within 1e-5 of the one row's, the SIMT path's bits), with the down projections' other tests,
# fast and exact. Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run4.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run4 120 .carry-fa
F='^(TestMoEDownRowsMatchesOneRow|TestMoEDown2MMA|TestMoEDown2MMAExpertTable|TestMoEDown2MatchesMoEDown|TestMoEDown)$'
(cd engine/cuda && T 90 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 90 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
run_pack
run_tally tests-exact tests-fast
grep -h "routed down on the tensor cores against moe_down" $O/tests-fast.log | awk '{print $(NF-2)}' | sort -g | tail -1

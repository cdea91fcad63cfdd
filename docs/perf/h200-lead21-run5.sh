#!/bin/bash
# Lead, session 21, run 5 (one call, ≤ 150 s): the review's mend (8f848b8: one PDL entry for the GEMV rows,
# the same sm_90 SASS; GemvRowsBF16 without its silent fallback) — the tests of the GEMVs with their weights
# ahead and of the B-row paths, under fast and exact, and the step and tower at 1, 2, 4, 8 rows.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run5.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run5 150 .carry-fa
F='^(TestGemvRowsWeightsAhead|TestGemvWeightsAhead|TestGemvRowsAheadTwins|TestRowsAhead|TestGemvRows|TestTowerFrameRows|TestTowerFrames|TestBackboneStepRowsMatchTakesAlone|TestTakeFramesMatchAlone|TestBackboneStepPDLOrder|TestBackboneMatchesCPU)$'
(cd engine/cuda && T 100 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 100 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
T 12 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 10 tower $P bench-tower -synthetic full -rows 1,2,4,8
run_pack
run_tally tests-fast tests-exact
grep -hE '^B =' $O/rows.log | cut -c1-60; grep -h '^takes' $O/tower.log | cut -c1-80

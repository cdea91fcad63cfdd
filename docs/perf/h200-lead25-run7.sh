#!/bin/bash
# Lead, session 25, run 7 (one call, ≤ 200 s): the review's mend (d70fb68: deltaNetInWaited by site and width, the
# chain tests' shared weights and replay, TestDeltaNetStepAhead failing if the reads ahead would not run). The tests
# it touches and the steps around them, fast and exact, the engine's batched takes; the step at 1, 2, 4, 8 rows
# (the same kernels as a807eb5's: its figures expected). Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run7 200 .carry-fa
F='^(TestDeltaNetStepAhead|TestMoEStepChainPDL|TestMoERowsChainPDL|TestDeltaNetStepRows|TestDeltaNetClusterStep|TestMixerStepGraph|TestBackboneMatchesCPU|TestBackboneStepPDLOrder|TestBackboneStepRowsMatchTakesAlone|TestTakeFramesMatchAlone)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngineBatchedTakes') &
(cd engine/cuda && T 120 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
T 12 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
run_pack
run_tally tests-fast tests-exact engine
grep -h "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -8
grep -h "^--- PASS: Test\(DeltaNetStepAhead\|MoEStepChainPDL\|MoERowsChainPDL\)" $O/tests-*.log
echo "-- rows"; grep -hE "^B =" $O/rows.log | cut -c1-100

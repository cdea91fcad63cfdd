#!/bin/bash
# Lead, session 26, run 9 (one call, ≤ 240 s): main's final code on the device after the review's mend (the DeltaNet
# layer's input projections named in one place: host code only, the same launches). The tests the mend touches and
# the steps around them under fast and exact, the engine's batched takes, the step at 1, 2, 4, 8 rows and the take
# (B = 1, 4). Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run9 240 .carry-fa
F='^(TestDeltaNetStepAhead|TestDeltaNetStepRows|TestDeltaNetLayer|TestDeltaNetClusterStep|TestMixerStepGraph|TestDeltaNetMixBits|TestBackboneMatchesCPU|TestBackboneStepPDLOrder|TestBackboneStepRowsMatchTakesAlone|TestTakeFramesMatchAlone|TestMoEStepChainPDL|TestMoERowsChainPDL)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngineBatchedTakes') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
T 14 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 32 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast
run_pack
run_tally tests-fast tests-exact engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -12
echo "-- rows: $(grep -hE '^B =' $O/rows.log | cut -c1-60 | tr '\n' ' ')"
grep -hE "^take  |batch [14]|  loop" $O/take.log | cut -c1-220

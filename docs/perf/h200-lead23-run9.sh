#!/bin/bash
# Lead, session 23, run 9 (one call, ≤ 150 s): the review's mends (de9c286: the tower's B-row choices as methods
# the tests assert on, one weights check, the MoE down test's tensor-core run only where it applies). Their tests
# fast and exact, the engine's; then bench-tower at 1, 2, 4, 8 rows and the take (B = 1, 4) once, to see the
# figures unmoved. Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run9.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run9 150 .carry-fa
F='^(TestTowerFastRows|TestTowerGateUpMMA|TestTowerGateUpMMAUse|TestTowerFrameRows|TestMoEDownRowsMatchesOneRow|TestGemvRows|TestTakeFramesMatchAlone)$'
(cd engine/cuda && T 80 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 80 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
T 10 tower $P bench-tower -synthetic full -rows 1,2,4,8
T 30 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast
run_pack
run_tally tests-exact tests-fast engine
grep -hE '^takes' $O/tower.log | awk '{print $2, $6}' | tr '\n' ' '; echo
grep -hE "^take  |batch [14]" $O/take.log | cut -c1-200

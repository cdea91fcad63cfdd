#!/bin/bash
# Lead, session 23, run 7 (one call, ≤ 200 s): the fast B-row tower projections on the SIMT instances measured
# faster at the tower's shapes (87b2800, towerFastRowsVariant). Their tests and the tower's frames and takes
# (fast and exact), the engine's; then alone bench-tower at 1, 2, 4, 8 rows alternating
# PROSCENIUM_GPU_TOWER_FAST_ROWS = 0 / on three times, the take (B = 1, 4) with each twice.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run7.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run7 200 .carry-fa
F='^(TestTowerFastRows|TestGemvRows|TestTowerFrameRows|TestTowerFrames|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTowerGateUpMMA)$'
(cd engine/cuda && T 100 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 100 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
for i in 1 2 3; do for v in 0 1; do
	T 10 tower-$v-$i env PROSCENIUM_GPU_TOWER_FAST_ROWS=$v $P bench-tower -synthetic full -rows 1,2,4,8
done; done
for i in 1 2; do for v in 0 1; do
	T 30 take-$v-$i env PROSCENIUM_GPU_TOWER_FAST_ROWS=$v $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast
done; done
run_pack
run_tally tests-exact tests-fast engine
grep -h "TestTowerFastRows" $O/tests-fast.log | head -3
for i in 1 2 3; do for v in 0 1; do echo "-- tower $v $i: $(grep -hE '^takes' $O/tower-$v-$i.log | awk '{print $2, $6}' | tr '\n' ' ')"; done; done
for i in 1 2; do for v in 0 1; do echo "-- take $v $i"; grep -hE "^take  |batch [14]" $O/take-$v-$i.log | cut -c1-200; done; done

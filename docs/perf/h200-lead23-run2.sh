#!/bin/bash
# Lead, session 23, run 2 (one call, ≤ 420 s): the tower's gate·up on the tensor cores from 2 rows (b00a154)
# and the other B-row projections on them (PROSCENIUM_GPU_TOWER_ROWS_MMA = T:N; gemvx_mma1_bf16_fast, one tile
# a block). While serve --ui loads: the tests of the paths it reaches, fast and exact, and the engine's. Then
# alone: TestGemvRowsBandwidth (every B-row instance at the step's and the tower's shapes), bench-tower at 1, 2,
# 4, 8 rows with the projections' rule 0 / 1:2 / 1:4 / a:2 / 2:4 three times, bench-backbone with
# PROSCENIUM_GPU_GEMVX unset / mma / mma1 twice, the take (B = 1, 4) with the rule 0 / a:2 / 1:2; then four
# concurrent requests through serve. Carried: .carry-fa and .carry-fb (h200-lead6-build.sh). Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 420 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
F='^(TestTowerGateUpMMA|TestTowerGateUpMMAUse|TestTowerFrameRows|TestTowerFrames|TestGemvRows|TestGemvRowsMatchesOneRow|TestGemvRowsWeightsAhead|TestBackboneStepRowsMatchTakesAlone|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesTwoAhead)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait $(jobs -p | grep -v "^$LOADER$") 2>/dev/null; sleep 1
(cd engine/cuda && T 80 bandwidth env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMVX_BANDWIDTH=1 $X/cuda.test -test.v -test.run '^TestGemvRowsBandwidth$')
for i in 1 2 3; do for v in 0 1:2 1:4 a:2 2:4; do
	T 10 tower-${v/:/_}-$i env PROSCENIUM_GPU_TOWER_ROWS_MMA=$v $P bench-tower -synthetic full -rows 1,2,4,8
done; done
for i in 1 2; do for v in default mma mma1; do
	T 8 rows-$v-$i env PROSCENIUM_GPU_GEMVX=${v/default/} $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
done; done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast"
for v in 0 a:2 1:2; do T 40 take-${v/:/_} env PROSCENIUM_GPU_TOWER_ROWS_MMA=$v $P $TK; done
wait $LOADER
T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py 18100 4
T 25 connected2 python3 docs/perf/h200-lead9-concurrent.py 18100 4
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
run_pack
run_tally tests-exact tests-fast engine
grep -h "relative error" $O/tests-fast.log | grep "tensor-core gate·up against the SIMT" | awk '{print $(NF-2)}' | sort -g | tail -1
grep -h "gemvx .* B=[248] " $O/bandwidth.log | sed 's/^ *[a-z_]*\.go:[0-9]*: //' | cut -c1-110
for i in 1 2 3; do for v in 0 1_2 1_4 a_2 2_4; do echo "-- tower $v $i: $(grep -hE '^takes' $O/tower-$v-$i.log | awk '{print $2, $6}' | tr '\n' ' ')"; done; done
for i in 1 2; do for v in default mma mma1; do echo "-- rows $v $i: $(grep -hE '^B =' $O/rows-$v-$i.log | cut -c1-20 | tr '\n' ' ')"; done; done
for v in 0 a_2 1_2; do echo "-- take $v"; grep -hE "^take|takes' codes|batch [14]" $O/take-$v.log | cut -c1-200; done
echo "-- serve"; cat $O/load.log | cut -c1-120; tail -n 5 $O/connected1.log; tail -n 5 $O/connected2.log

#!/bin/bash
# Lead, session 23, run 1 (one call, ≤ 560 s): the tower's B-row gate·up on the tensor cores (gate23,
# ae3ffbd: tower_gate_up_swiglu_mma_fast under fast from 4 rows), and session 22's final code's checks not yet
# run as one binary (the B-row down on the tensor cores through a host tier's expert table:
# TestMoEDown2MMAExpertTable, and a capped B-row take). While serve --ui loads a full-size checkpoint: the
# tests of every path the change reaches (the gate·up against float64 and the SIMT kernel, the tower frames of
# several takes against each alone, the tensor-core GEMV whose body moved, the B-row step and takes), fast and
# exact, and the engine's. Then alone: bench-tower at 1, 2, 4, 8 rows alternating PROSCENIUM_GPU_TOWER_GATEUP_MMA
# = 0 / default (4) / 2 three times, the step at 1…8 rows twice, the take (B = 1, 4) with it off and on, a
# capped take of one and four; then the product through serve.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh). Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 560 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
F='^(TestTowerGateUpMMA|TestTowerGateUpMMAUse|TestTowerFrameRows|TestTowerFrames|TestGemvRows|TestGemvRowsWeightsAhead|TestBackboneStepRowsMatchTakesAlone|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesTwoAhead|TestMoEDown2MMA|TestMoEDown2MMAExpertTable|TestMoEDown2MatchesMoEDown|TestExpertTable|TestBackboneMatchesCPU|TestBackboneStepPDLOrder|TestFramesPrefixCacheMatchesUncached)$'
(cd engine/cuda && T 200 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 200 tests-exact $X/cuda.test -test.v -test.run "$F")
wait $(jobs -p | grep -v "^$LOADER$") 2>/dev/null; sleep 1
for i in 1 2 3; do for v in 0 4 2; do
	T 10 tower-$v-$i env PROSCENIUM_GPU_TOWER_GATEUP_MMA=$v $P bench-tower -synthetic full -rows 1,2,4,8
done; done
T 8 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 8 rows2 $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast"
T 40 take-0 env PROSCENIUM_GPU_TOWER_GATEUP_MMA=0 $P $TK
T 40 take-4 $P $TK
T 70 capped $P bench-take -synthetic full -prompt 60 -frames 100 -takes 1 -cap 32212254720 -batch 1,4 -numerics fast
wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py 18100 4
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
run_pack
run_tally tests-exact tests-fast engine
grep -h "gate·up against\|teacher-forced" $O/tests-fast.log | sed 's/^ *//' | cut -c1-150 | sort | uniq -c | sort -rn | head -8
grep -h "relative error" $O/tests-fast.log | grep "tensor-core gate·up against the SIMT" | awk '{print $(NF-2)}' | sort -g | tail -2
for i in 1 2 3; do for v in 0 4 2; do echo "-- tower $v $i: $(grep -hE '^takes' $O/tower-$v-$i.log | awk '{print $2, $6}' | tr '\n' ' ')"; done; done
for f in rows rows2; do echo "-- $f"; grep -hE "^B =" $O/$f.log | cut -c1-110; done
for f in take-0 take-4; do echo "-- $f"; grep -hE "^take|takes after|takes' codes|first audio  |  frame  |batch [14]|backbone step" $O/$f.log | cut -c1-200; done
echo "-- capped"; grep -hE "^take|takes after|first audio|batch [14]|hit rate|layers on|peak|plan" $O/capped.log | cut -c1-200 | head -20
echo "-- product"; cat $O/load.log | cut -c1-120; tail -n 6 $O/product.log; tail -n 5 $O/connected1.log

#!/bin/bash
# Lead, session 21, run 2 (one call, ≤ 330 s): the B-row projections' first weights ahead of the PDL wait
# (gemvxa_*, GemvRows.WeightsAhead at the output, dense and tower sites). Tests of the paths that changed,
# fast and exact; then, alone: bench-backbone at 1, 2, 4, 8 rows, default against PROSCENIUM_GPU_GEMV_AHEAD=tower
# (the backbone's sites off), twice alternating; bench-tower at 1, 2, 4, 8 rows, default against
# =out,dense (the tower's off), twice; the take (B = 1, 4, the Current figures' command); ncu of the step
# graph at one row and at four (time and DRAM bytes a kernel).
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 330 .carry-fa
F='^(TestGemvRowsWeightsAhead|TestGemvWeightsAhead|TestGemvRows|TestTowerFrameRows|TestTowerFrames|TestBackboneStepRowsMatchTakesAlone|TestTakeFramesMatchAlone|TestBackboneStepPDLOrder|TestMoEStepChainPDL|TestBackboneMatchesCPU|TestFramesTwoAhead)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
for i in 1 2; do for v in default tower; do
	a=""; [ $v = tower ] && a="PROSCENIUM_GPU_GEMV_AHEAD=tower"
	T 12 rows-$v-$i env $a $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
done; done
for i in 1 2; do for v in default outdense; do
	a=""; [ $v = outdense ] && a="PROSCENIUM_GPU_GEMV_AHEAD=out,dense"
	T 10 tower-$v-$i env $a $P bench-tower -synthetic full -rows 1,2,4,8
done; done
T 45 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--clock-control none --profile-from-start off --graph-profiling node --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum"
T 45 ncu-step $NCU $S $P bench-backbone -synthetic full -profile-step -numerics fast
T 45 ncu-rows4 $NCU $S $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
run_pack
run_tally tests-fast tests-exact engine
for i in 1 2; do for v in default tower; do echo "-- rows $v $i: $(grep -hE '^B =' $O/rows-$v-$i.log | cut -c1-40 | tr '\n' ' ')"; done; done
for i in 1 2; do for v in default outdense; do echo "-- tower $v $i: $(grep -h '^takes' $O/tower-$v-$i.log | cut -c1-110)"; done; done
echo "-- take"; grep -hE "^take|takes after|first audio  |  frame  |batch [14]|backbone step" $O/take.log | cut -c1-200
for f in ncu-step ncu-rows4; do echo "-- $f"; python3 docs/perf/ncu-agg.py $O/$f.log 2>&1 | head -16; done

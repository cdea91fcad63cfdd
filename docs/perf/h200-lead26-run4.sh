#!/bin/bash
# (Run from branch route26, not merged: main has neither its kernels nor PROSCENIUM_GPU_NORM_ROUTE.)
# Lead, session 26, run 4 (one call, ≤ 240 s): route26 — the router in the norm with the shared expert's rows as a
# projection of their own before the gate·up by ids (the default now), against session 25's launches
# (PROSCENIUM_GPU_NORM_ROUTE=0) and run 3's merged launch (=merged): bench-backbone at 1, 2, 4, 8 rows twice each,
# alternating, and the take (B = 1, 4) off / on; the tests the change touches under fast, and the engine's.
# Carried: .carry-fa.
set -u
. docs/perf/run-lib.sh
run_setup run4 240 .carry-fa
F='^(TestNormRoute|TestMoEGateUpShared|TestBackboneMoE|TestFusedStep|TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestMoEGateUpIdsMatchesRouted|TestMoEGateUpRoute|TestExpertTable|TestMoEStepChainPDL|TestMoERowsChainPDL)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngineBatchedTakes') &
wait
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 14 rows-off-$i env PROSCENIUM_GPU_NORM_ROUTE=0 $P $BB
	T 14 rows-on-$i $P $BB
	T 14 rows-merged-$i env PROSCENIUM_GPU_NORM_ROUTE=merged $P $BB
done
T 32 take-off-1 env PROSCENIUM_GPU_NORM_ROUTE=0 $P $TK
T 32 take-on-1 $P $TK
run_pack
run_tally tests-fast engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-fast.log | head -24
for i in 1 2; do for v in off on merged; do echo "-- rows $v $i"; grep -hE "^B =" $O/rows-$v-$i.log | cut -c1-90; done; done
for v in off on; do echo "-- take $v"; grep -hE "^take  |batch [14]|  loop" $O/take-$v-1.log | cut -c1-190; done

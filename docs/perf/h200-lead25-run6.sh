#!/bin/bash
# Lead, session 25, run 6 (one call, ≤ 300 s): the one-take step's shared expert projected before the down
# projections' PDL wait, its blocks first (moe_down2_shared_ahead_fast, behind a routed gate·up that now lets the
# next launch start after its own wait at one row too). Its tests (the kernel's bits against moe_down2_fast's, the
# one-row feed-forward chain with PDL and without, the loads ahead on and off), the MoE, backbone and take tests
# fast and exact, the engine's tests; the A/B in one binary ($PROSCENIUM_GPU_MOE_DOWN_AHEAD=0 / unset):
# bench-backbone at 1, 2, 4, 8 rows and the take (B = 1, 4) twice each, alternating (the codes' digests must be
# the same). Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run6 300 .carry-fa
F='^(TestMoEStepChainPDL|TestMoERowsChainPDL|TestMoEDown2MatchesMoEDown|TestMoEDown2MMA|TestMoEDown2MMAExpertTable|TestMoEDown|TestMoEDownRowsMatchesOneRow|TestMoEGateUpRoute|TestMoEGateUpIdsMatchesRouted|TestExpertTable|TestBackboneMoE|TestBackboneMatchesCPU|TestBackboneStepPDLOrder|TestBackboneStepRowsMatchTakesAlone|TestFusedStep|TestFramesTwoAhead|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestDeltaNetStepAhead)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do T 10 rows-off-$i env PROSCENIUM_GPU_MOE_DOWN_AHEAD=0 $P $BB; T 10 rows-on-$i $P $BB; done
for i in 1 2; do T 25 take-off-$i env PROSCENIUM_GPU_MOE_DOWN_AHEAD=0 $P $TK; T 25 take-on-$i $P $TK; done
run_pack
run_tally tests-fast tests-exact engine
grep -h "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -8
for i in 1 2; do for v in off on; do echo "-- rows $v $i"; grep -hE "^B =" $O/rows-$v-$i.log | cut -c1-100; done; done
for i in 1 2; do for v in off on; do echo "-- take $v $i"; grep -hE "^take  |batch [14]" $O/take-$v-$i.log | cut -c1-150; grep -h 'batch 4' $O/take-$v-$i.log | grep -o 'codes.*'; done; done

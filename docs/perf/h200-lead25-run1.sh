#!/bin/bash
# Lead, session 25, run 1 (one call, ≤ 300 s): a B-row step's tensor-core down projections reading their ids,
# weights and scales before the PDL wait (moe_down2_mma_ahead_fast, behind a gate·up by ids that lets it start
# only after its own wait; ahead25). The bits: the kernel against moe_down2_mma_fast (TestMoEDown2MMA,
# TestMoEDown2MMAExpertTable), the B-row feed-forward chain in a graph with PDL and the loads ahead against
# neither (TestMoERowsChainPDL), the B-row step and takes against the takes alone, fast and exact (the gate·up by
# ids now lets the next launch start after its wait under both). The A/B in one binary
# ($PROSCENIUM_GPU_MOE_DOWN_AHEAD=0 / unset): bench-backbone at 1, 2, 4, 8 rows and the take (B = 1, 4) twice
# each, alternating (the codes' digests must be the same). Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run1 300 .carry-fa
F='^(TestMoEDown2MMA|TestMoEDown2MMAExpertTable|TestMoERowsChainPDL|TestMoEStepChainPDL|TestMoEGateUpIdsMatchesRouted|TestMoEDown2MatchesMoEDown|TestMoEDownRowsMatchesOneRow|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestExpertTable)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngineBatchedTakes') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 12 rows-off-$i env PROSCENIUM_GPU_MOE_DOWN_AHEAD=0 $P $BB
	T 12 rows-on-$i $P $BB
done
for i in 1 2; do
	T 30 take-off-$i env PROSCENIUM_GPU_MOE_DOWN_AHEAD=0 $P $TK
	T 30 take-on-$i $P $TK
done
run_pack
run_tally tests-fast tests-exact engine
grep -h "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -8
grep -h "TestMoERowsChainPDL\|chain_pdl\|rows, .* layers" $O/tests-fast.log | head -4
for i in 1 2; do for v in off on; do echo "-- rows $v $i"; grep -hE "^B =" $O/rows-$v-$i.log | cut -c1-110; done; done
for i in 1 2; do for v in off on; do echo "-- take $v $i"; grep -hE "^take  |batch [14]|  loop|codes" $O/take-$v-$i.log | cut -c1-180; done; done

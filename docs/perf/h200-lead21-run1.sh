#!/bin/bash
# Lead, session 21, run 1 (one call, ≤ 330 s): the routing published ahead of the expert kernels' PDL wait
# (route21) and the DeltaNet step's L2 prefetch of the output projection (PROSCENIUM_GPU_L2_OUT=1).
# Tests of every path that changed, fast and exact (eachNumerics tests run both); the backbone and the B-row
# step against the CPU with the prefetch on; then, alone, bench-backbone at 1, 2, 4, 8 rows alternating
# off (ROUTE_AHEAD=0) / route / route+l2 / l2, twice; bench-take (B = 1, 4) with each, its codes' digests
# compared (the same bits: the same codes).
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 330 .carry-fa
F='^(TestRouteAhead|TestMoEDown2MatchesMoEDown|TestMoEGateUpIdsMatchesRouted|TestMoEGateUpRoute|TestMoEStepChainPDL|TestMoEDownRowsMatchesOneRow|TestExpertTable|TestMoEDown|TestBackboneMoE|TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestTakeFramesMatchAlone|TestFusedStep|TestDeltaNetClusterStep|TestGemvWeightsAhead)$'
FL='^(TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestDeltaNetClusterStep|TestBackboneStepPDLOrder|TestTakeFramesMatchAlone)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 150 tests-l2 env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_L2_OUT=1 $X/cuda.test -test.v -test.run "$FL") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
declare -A E=([off]="PROSCENIUM_GPU_ROUTE_AHEAD=0" [route]="PROSCENIUM_GPU_ROUTE_AHEAD=1" [routel2]="PROSCENIUM_GPU_L2_OUT=1" [l2]="PROSCENIUM_GPU_ROUTE_AHEAD=0 PROSCENIUM_GPU_L2_OUT=1")
for i in 1 2; do for v in off route routel2 l2; do
	T 12 rows-$v-$i env ${E[$v]} $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
done; done
for v in off route routel2; do
	T 40 take-$v env ${E[$v]} $P bench-take -synthetic full -prompt 60 -frames 300 -takes 4 -batch 1,4 -seed-base 3 -numerics fast -json
done
run_pack
run_tally tests-fast tests-exact tests-l2 engine
grep -h 'route ahead\|same bits with the routing' $O/tests-fast.log | head -8
for i in 1 2; do for v in off route routel2 l2; do echo "-- rows $v $i: $(grep -hE '^B =' $O/rows-$v-$i.log | cut -c1-40 | tr '\n' ' ')"; done; done
for v in off route routel2; do python3 -c "
import json,sys
d=json.load(open('$O/take-$v.log'))
print('take $v: rtf %.4f first %.1f step %.3f frame %s takes %s digests %s' % (d['real_time_factor'], d['time_to_first_audio_ms'], d['backbone_step_ms'], d['stage_ms_per_frame'], ['%.4f'%x for x in d['take_real_time_factors']], d['take_code_digests']))
for b in d.get('batches') or []:
    print('  batch', b['batch'], 'audio/s %.2f'%b['audio_s_per_s'], 'rtf', ['%.4f'%x for x in b['real_time_factor']], 'first', ['%.1f'%x for x in b['time_to_first_audio_ms']], 'digests', b['code_digests'])
" 2>&1 | tail -6; done

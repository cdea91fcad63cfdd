#!/bin/bash
# Lead, session 22, run 1 (one call, ≤ 300 s): moe_down_stream_fast (stream22), a fast B-row step's down
# projections walked by a few blocks an SM, the next item's weights in flight through the current one's sums.
# Tests of the paths that changed (fast and exact: the kernel is fast only, exact must be untouched); the
# launches alone (TestMoEDown2Timing); bench-backbone at 1, 2, 4, 8 rows alternating the switch
# PROSCENIUM_GPU_MOE_DOWN_STREAM = 0 (moe_down2) / 2 (the default) / 1, three times; bench-take (B = 1, 4)
# with 0 and 2, the codes' digests compared (the same bits: the same codes); ncu of the four-row step's down
# projections, both ways.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 300 .carry-fa
F='^(TestMoEDownStreamMatchesMoEDown2|TestMoEDownStreamGrid|TestMoEDown2MatchesMoEDown|TestMoEDownRowsMatchesOneRow|TestMoEDown|TestExpertTable|TestMoEStepChainPDL|TestBackboneMoE|TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
(cd engine/cuda && T 40 timing env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^TestMoEDown2Timing$')
for i in 1 2 3; do for v in 0 2 1; do
	T 12 rows-$v-$i env PROSCENIUM_GPU_MOE_DOWN_STREAM=$v $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
done; done
for v in 0 2; do
	T 40 take-$v env PROSCENIUM_GPU_MOE_DOWN_STREAM=$v $P bench-take -synthetic full -prompt 60 -frames 300 -takes 4 -batch 1,4 -seed-base 3 -numerics fast -json
done
if command -v ncu > /dev/null; then for v in 0 2; do
	T 60 ncu-$v env PROSCENIUM_GPU_MOE_DOWN_STREAM=$v ncu --clock-control none --profile-from-start off --graph-profiling node --csv \
		--kernel-name regex:moe_ --metrics gpu__time_duration.sum,dram__bytes_read.sum $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
done; fi
run_pack
run_tally tests-fast tests-exact engine
grep -h 'stream on\|moe_down2 fast' $O/tests-fast.log | sort | uniq -c | sort -rn | head -6
grep -h '^timing' $O/timing.log
for i in 1 2 3; do for v in 0 2 1; do echo "-- rows $v $i: $(grep -hE '^B =' $O/rows-$v-$i.log | cut -c1-40 | tr '\n' ' ')"; done; done
for v in 0 2; do python3 -c "
import json,sys
d=json.load(open('$O/take-$v.log'))
print('take $v: rtf %.4f first %.1f step %.3f frame %s takes %s digests %s' % (d['real_time_factor'], d['time_to_first_audio_ms'], d['backbone_step_ms'], d['stage_ms_per_frame'], ['%.4f'%x for x in d['take_real_time_factors']], d['take_code_digests']))
for b in d.get('batches') or []:
    print('  batch', b['batch'], 'audio/s %.2f'%b['audio_s_per_s'], 'rtf', ['%.4f'%x for x in b['real_time_factor']], 'first', ['%.1f'%x for x in b['time_to_first_audio_ms']], 'digests', b['code_digests'])
" 2>&1 | tail -6; done
for v in 0 2; do [ -f $O/ncu-$v.log ] && { echo "-- ncu $v"; python3 docs/perf/ncu-agg.py $O/ncu-$v.log 2>&1 | head -8; }; done

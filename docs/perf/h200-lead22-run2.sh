#!/bin/bash
# Lead, session 22, run 2 (one call, ≤ 330 s): the fast FP8 dot's decode (cvt22, kernels/common.cuh
# PROSCENIUM_FP8_DOT): 0 the integer path (session 21's), 1 sm_89+'s cvt.rn.f16x2.e4m3x2 (HEAD's default),
# 2 both in two sums. The FP8 paths' tests under fast and exact with 1 (.carry-fa; exact's kernels do not use
# the fast dot; .carry-v0 and .carry-v2 hold proscenium-gpu only, the carries' 64 MiB); the free-running agreement with the CPU under 1 (demo 100 seeds, odd
# 20 with the rounding baseline); then alone bench-backbone at 1, 2, 4, 8 rows alternating 0 / 1 / 2 three
# times, bench-take (B = 1, 4) with each, ncu of the four-row step's MoE kernels with 1 and 2 (run 1 has 0).
# Carried: .carry-fa, .carry-v0, .carry-v2 (h200-lead22-build.sh 0 2, the v bundles repacked with proscenium-gpu alone). Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 330 .carry-fa
for v in 0 2; do mkdir -p $X/v$v; bash docs/perf/h200-lead6-unpack.sh .carry-v$v $X/v$v >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }; done
declare -A PG=([0]=$X/v0/proscenium-gpu [1]=$P [2]=$X/v2/proscenium-gpu)
F='^(TestGemvFP8|TestGemvRows|TestGemvRowsMatchesOneRow|TestGemvWeightsAhead|TestGemvRowsWeightsAhead|TestMoEDown|TestMoEDown2MatchesMoEDown|TestMoEDownRowsMatchesOneRow|TestMoEGateUpRoute|TestMoEGateUpIdsMatchesRouted|TestMoERowsGEMV|TestExpertTable|TestMoEStepChainPDL|TestBackboneMoE|TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesTwoAhead|TestTowerFrames|TestTowerFrameRows|TestFusedStep)$'
(cd engine/cuda && T 200 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
# (v2 carries proscenium-gpu only: the working tree and carries must stay under 64 MiB)
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 100 agree-demo-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 60 agree-odd-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json ) &
(cd engine/cuda && T 200 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
for i in 1 2 3; do for v in 0 1 2; do
	T 12 rows-$v-$i ${PG[$v]} bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
done; done
for v in 0 1 2; do
	T 40 take-$v ${PG[$v]} bench-take -synthetic full -prompt 60 -frames 300 -takes 4 -batch 1,4 -seed-base 3 -numerics fast -json
done
if command -v ncu > /dev/null; then for v in 1 2; do
	T 40 ncu-$v ncu --clock-control none --profile-from-start off --graph-profiling node --csv --kernel-name regex:moe_ \
		--metrics gpu__time_duration.sum,dram__bytes_read.sum ${PG[$v]} bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
	T 40 ncu1-$v ncu --clock-control none --profile-from-start off --graph-profiling node --csv --kernel-name regex:'moe_|gemv_fp8' \
		--metrics gpu__time_duration.sum,dram__bytes_read.sum ${PG[$v]} bench-backbone -synthetic full -profile-step -numerics fast
done; fi
run_pack
run_tally tests-fast tests-exact engine
for i in 1 2 3; do for v in 0 1 2; do echo "-- rows $v $i: $(grep -hE '^B =' $O/rows-$v-$i.log | cut -c1-40 | tr '\n' ' ')"; done; done
for v in 0 1 2; do python3 -c "
import json,sys
d=json.load(open('$O/take-$v.log'))
print('take $v: rtf %.4f first %.1f step %.3f frame %s takes %s digests %s' % (d['real_time_factor'], d['time_to_first_audio_ms'], d['backbone_step_ms'], d['stage_ms_per_frame'], ['%.4f'%x for x in d['take_real_time_factors']], d['take_code_digests']))
for b in d.get('batches') or []:
    print('  batch', b['batch'], 'audio/s %.2f'%b['audio_s_per_s'], 'rtf', ['%.4f'%x for x in b['real_time_factor']], 'first', ['%.1f'%x for x in b['time_to_first_audio_ms']], 'digests', b['code_digests'])
" 2>&1 | tail -6; done
for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; python3 -c "
import json;d=json.load(open('$O/$f.json'));fr=d['free_running'];tf=d['teacher_forced']
print('identical',fr['identical_takes'],'of',fr['seeds'],'classes',{k:fr.get(k) for k in ('draw_near_ties','routing_near_ties','unexplained')},'tf worst',tf['worst_relative_error'],'over',tf['vectors_over_tolerance'],'baseline',[b['identical_takes'] for b in (d.get('cpu_rounding_baseline') or [])])" 2>&1 | tail -1; done
for f in ncu-1 ncu-2 ncu1-1 ncu1-2; do [ -f $O/$f.log ] && { echo "-- $f"; python3 docs/perf/ncu-agg.py $O/$f.log 2>&1 | head -7; }; done

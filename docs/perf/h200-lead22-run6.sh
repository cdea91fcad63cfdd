#!/bin/bash
# Lead, session 22, run 6 (one call, ≤ 330 s): moe_down2_mma_fast (mma22), the routed FP8 down projections on
# the tensor cores under fast. While serve --ui loads a full-size checkpoint: its tests and those of every path
# it reaches (the down projections against moe_down2_fast and the old kernels, the expert table, the backbone
# and B-row step against the CPU and the takes alone), fast and exact (exact must be untouched), the engine's,
# and the free-running agreement with the CPU (fast: demo 100 seeds, odd 20 with the rounding baseline).
# Then alone: the launches alone (TestMoEDown2Timing), bench-backbone at 1, 2, 4, 8 rows alternating
# PROSCENIUM_GPU_MOE_DOWN_MMA = 0 / on three times, the take (B = 1, 4) both ways, ncu of the four-row step's
# MoE kernels with it on; then the product through serve (on).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh). Logs: $OUT/run6.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run6 330 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
F='^(TestMoEDown2MMA|TestMoEDown2MatchesMoEDown|TestMoEDown|TestMoEDownRowsMatchesOneRow|TestExpertTable|TestMoEStepChainPDL|TestBackboneMoE|TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestBackboneStepPDLOrder|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesPrefixCacheMatchesUncached|TestFusedStep)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 100 agree-demo-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 60 agree-odd-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json ) &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait $(jobs -p | grep -v "^$LOADER$") 2>/dev/null; sleep 1
(cd engine/cuda && T 40 timing env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^TestMoEDown2Timing$')
for i in 1 2 3; do for v in 0 1; do
	T 12 rows-$v-$i env PROSCENIUM_GPU_MOE_DOWN_MMA=$v $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
done; done
for v in 0 1; do
	T 40 take-$v env PROSCENIUM_GPU_MOE_DOWN_MMA=$v $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
done
wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py 18100 4
T 40 studio python3 docs/perf/h200-lead12-studio.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
command -v ncu > /dev/null && T 40 ncu4 ncu --clock-control none --profile-from-start off --graph-profiling node --csv --kernel-name regex:moe_ \
	--metrics gpu__time_duration.sum,dram__bytes_read.sum $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
command -v ncu > /dev/null && T 40 ncu1 ncu --clock-control none --profile-from-start off --graph-profiling node --csv --kernel-name regex:moe_ \
	--metrics gpu__time_duration.sum,dram__bytes_read.sum $P bench-backbone -synthetic full -profile-step -numerics fast
run_pack
run_tally tests-exact tests-fast engine
grep -h "routed down on the tensor cores" $O/tests-fast.log | sort -t' ' -k1 | head -12
grep -h '^timing' $O/timing.log
for i in 1 2 3; do for v in 0 1; do echo "-- rows $v $i: $(grep -hE '^B =' $O/rows-$v-$i.log | cut -c1-40 | tr '\n' ' ')"; done; done
for v in 0 1; do echo "-- take $v"; grep -hE "^take|takes after|takes' codes|first audio  |  frame  |batch [14]|backbone step" $O/take-$v.log | cut -c1-200; done
for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; python3 -c "
import json;d=json.load(open('$O/$f.json'));fr=d['free_running'];tf=d['teacher_forced']
print('identical',fr['identical_takes'],'of',fr['seeds'],'classes',{k:fr.get(k) for k in ('draw_near_ties','routing_near_ties','unexplained')},'tf worst',tf['worst_relative_error'],'over',tf['vectors_over_tolerance'],'baseline',[b['identical_takes'] for b in (d.get('cpu_rounding_baseline') or [])])" 2>&1 | tail -1; done
echo "-- product"; cat $O/load.log | cut -c1-120; tail -n 6 $O/product.log; tail -n 5 $O/connected1.log; tail -n 6 $O/studio.log | cut -c1-330
for f in ncu4 ncu1; do [ -f $O/$f.log ] && { echo "-- $f"; python3 docs/perf/ncu-agg.py $O/$f.log 2>&1 | head -6; }; done

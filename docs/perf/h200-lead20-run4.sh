#!/bin/bash
# Lead, session 20, run 4 (one call, ≤ 280 s): the tower's GEMVs and fused gate·up with their first
# weights ahead of the PDL wait by default (run 3: frame 0.760 → 0.737 ms) and its row kernels
# (norms, eh_proj input) in blocks of ⌈dim/8⌉ threads, 256 at Drama 3's width, not 1024 (the probe:
# a norm of 256 threads costs less than one of 1024 in a chain of GEMVs). The probe with the step's
# own norms (cluster, one block). The frame and tower tests under both policies, the engine's, the
# free-running agreement with the CPU (fast, demo 100 seeds, odd 20 with the rounding baseline);
# then A/B of the tower frame (default; 1024-thread rows; no weights ahead; both old) twice, and
# the take (B = 1, 4) for the Current figures.
# Carried: .carry-fa. Logs: $OUT/run4.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run4 280 .carry-fa
(cd engine/cuda && T 30 probe $X/cuda.test -test.v -test.run '^TestChainProbe$')
F='^(TestTowerFrames|TestTowerPromptRows|TestTowerFrameRows|TestGemvRows|TestGemvWeightsAhead|TestFramesTwoAhead|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestTakeFramesMatchAlone|TestTakeFramesPCMMatchesAlone|TestCodecFrames)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 120 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 90 agree-demo-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 50 agree-odd-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json ) &
(cd engine/cuda && T 120 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
for i in 1 2; do
	T 8 tower-new$i $P bench-tower -synthetic full -rows 1,4
	T 8 tower-rows1024-$i env PROSCENIUM_GPU_TOWER_ROW_THREADS=1024 $P bench-tower -synthetic full -rows 1,4
	T 8 tower-noahead$i env PROSCENIUM_GPU_GEMV_AHEAD=0 $P bench-tower -synthetic full -rows 1,4
	T 8 tower-old$i env PROSCENIUM_GPU_GEMV_AHEAD=0 PROSCENIUM_GPU_TOWER_ROW_THREADS=1024 $P bench-tower -synthetic full -rows 1,4
done
T 45 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
run_pack
run_tally probe tests-fast tests-exact engine
grep -h 'chain probe in 12352' $O/probe.log
for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; python3 -c "
import json;d=json.load(open('$O/$f.json'));fr=d['free_running'];tf=d['teacher_forced']
print('identical',fr['identical_takes'],'of',fr['seeds'],'classes',{k:fr.get(k) for k in ('draw_near_ties','routing_near_ties','unexplained')},'tf worst',tf['worst_relative_error'],'over',tf['vectors_over_tolerance'],'baseline',[b['identical_takes'] for b in (d.get('cpu_rounding_baseline') or [])])" 2>&1 | tail -1; done
for f in new1 rows1024-1 noahead1 old1 new2 rows1024-2 noahead2 old2; do echo "-- $f $(grep -h '^takes' $O/tower-$f.log | cut -c1-60 | tr '\n' ' ')"; done
grep -hE "^take|takes after|first audio  |  frame  |batch [14]|backbone step|tower" $O/take.log | cut -c1-200

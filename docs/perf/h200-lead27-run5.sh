#!/bin/bash
# Lead, session 27, run 5 (one call, ≤ 330 s): the tower's frame-row attention on as few key splits as its cache
# needs (tower_attend_rope{,_takes}_h128), and the review's one embedding-row norm. The tower's, frames' and takes'
# tests under fast and exact (every tower test runs the new instances and, as attn-wide, the old); the engine's;
# the agreement with the CPU (fast, the tensor-core attention forced on); then the A/B in one binary
# ($PROSCENIUM_GPU_TOWER_ATTN=wide / unset): bench-tower at 1, 2, 4, 8 rows after 60 and 300 prefilled rows, twice,
# alternating, and the take (B = 1, 4) twice. Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run5 330 .carry-fa
F='^(TestTowerDrawnEH|TestTowerFrames|TestTowerFrameRows|TestTowerPromptRows|TestTowerFastRows|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesTwoAhead|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestModelBytesMatchesTheLoad)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 120 agree-demo-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 60 agree-odd-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json ) &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
OFF="env PROSCENIUM_GPU_TOWER_ATTN=wide"
for i in 1 2; do for p in 60 300; do
	T 8 tower-off-$p-$i $OFF $P bench-tower -synthetic full -rows 1,2,4,8 -prefill $p
	T 8 tower-on-$p-$i $P bench-tower -synthetic full -rows 1,2,4,8 -prefill $p
done; done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do T 25 take-off-$i $OFF $P $TK; T 25 take-on-$i $P $TK; done
run_pack
run_tally tests-exact tests-fast engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; python3 -c "
import json;d=json.load(open('$O/$f.json'));fr=d['free_running'];tf=d['teacher_forced']
print('identical',fr['identical_takes'],'of',fr['seeds'],'classes',{k:fr.get(k) for k in ('draw_near_ties','routing_near_ties','unexplained')},'tf worst',tf['worst_relative_error'],'over',tf['vectors_over_tolerance'],'baseline',[b['identical_takes'] for b in (d.get('cpu_rounding_baseline') or [])])" 2>&1 | tail -1; done
for p in 60 300; do for i in 1 2; do for v in off on; do echo "-- tower $v $p $i: $(grep -h '^takes' $O/tower-$v-$p-$i.log | sed 's/, gemvx default//;s/ of weights//;s/ a take//' | cut -c1-60 | tr '\n' ';')"; done; done; done
for i in 1 2; do for v in off on; do echo "-- take $v $i"; grep -hE "^take  |batch [14]" $O/take-$v-$i.log | cut -c1-150; grep -h 'batch 4' $O/take-$v-$i.log | grep -o 'codes.*'; done; done

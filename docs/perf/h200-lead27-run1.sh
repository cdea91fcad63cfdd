#!/bin/bash
# Lead, session 27, run 1 (one call, ≤ 420 s): ehtab27 — a drawn code's eh_proj by table (T[c] = W_e·enorm(E[c])
# made at NewTower, W_h·hnorm(h_out) beside the codebook head in one launch before the draw, T[c] added in the
# attention norm after it). Its tests and the tower's, frames' and takes' under fast and exact; the engine's
# batched takes; the free-running agreement with the CPU (fast, the tensor-core attention forced on: demo 100 seeds,
# odd 20 with the rounding baseline); then the A/B in one binary ($PROSCENIUM_GPU_TOWER_EH=off / split / merged):
# bench-tower at 1, 2, 4, 8 rows twice, alternating, and the take (B = 1, 4) off and merged.
# Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run1 420 .carry-fa
F='^(TestTowerDrawnEH|TestTowerFrames|TestTowerFrameRows|TestTowerPromptRows|TestTowerFastRows|TestTowerGateUpMMA|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestFramesTwoAhead|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestModelBytesMatchesTheLoad|TestGemvRows)$'
(cd engine/cuda && T 200 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 120 agree-demo-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 60 agree-odd-fast env PROSCENIUM_GPU_ATTN_MMA=on $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json ) &
(cd engine/cuda && T 200 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
BT="bench-tower -synthetic full -rows 1,2,4,8"
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do for v in off split merged; do T 20 tower-$v-$i env PROSCENIUM_GPU_TOWER_EH=$v $P $BT; done; done
for v in off merged; do T 32 take-$v env PROSCENIUM_GPU_TOWER_EH=$v $P $TK; done
run_pack
run_tally tests-exact tests-fast engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
grep -h "residual layer" $O/tests-fast.log | head -4
for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; python3 -c "
import json;d=json.load(open('$O/$f.json'));fr=d['free_running'];tf=d['teacher_forced']
print('identical',fr['identical_takes'],'of',fr['seeds'],'classes',{k:fr.get(k) for k in ('draw_near_ties','routing_near_ties','unexplained')},'tf worst',tf['worst_relative_error'],'over',tf['vectors_over_tolerance'],'baseline',[b['identical_takes'] for b in (d.get('cpu_rounding_baseline') or [])])" 2>&1 | tail -1; done
for i in 1 2; do for v in off split merged; do echo "-- tower $v $i: $(grep -h '^takes' $O/tower-$v-$i.log | sed 's/, gemvx default//;s/ of weights//' | cut -c1-80 | tr '\n' ';')"; done; done
for v in off merged; do echo "-- take $v"; grep -hE "^take  |batch [14]|  loop|codes" $O/take-$v.log | cut -c1-180; done

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
run_agreement &
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
agreement_report
for i in 1 2; do for v in off split merged; do echo "-- tower $v $i: $(grep -h '^takes' $O/tower-$v-$i.log | sed 's/, gemvx default//;s/ of weights//' | cut -c1-80 | tr '\n' ';')"; done; done
for v in off merged; do echo "-- take $v"; grep -hE "^take  |batch [14]|  loop|codes" $O/take-$v.log | cut -c1-180; done

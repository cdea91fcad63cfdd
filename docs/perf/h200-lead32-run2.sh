#!/bin/bash
# Lead, session 32, run 2 (one call, ≤ 200 s; the steps in order of need, as far as the budget goes), on main from 0949508 (-near-ties with classes):
# 1. the tower attention's rule from three rows (the _h128 instances, 128 rows a split): the tower's tests and the
#    takes together against alone, fast and exact; the engine's tests with the mended TestBenchJSONSaysItsUnits;
# 2. the tower as built at 1, 2, 3, 4, 8 rows from 60 and 300 cache rows, twice;
# 3. three takes at once (and two, whose rule did not change) as built against the wide attention forced, alternating,
#    twice; -near-ties at three takes under fast;
# 4. -near-ties at four and eight takes with every router zeroed (-hot-experts: each step routes to the same experts
#    whatever its input, so no routing choice can flip): if run 1's jumps of 1e-2 in a take's logits were routing flips,
#    none is left here and every take's logits stay within float32 rounding of its logits alone.
# Carried: .carry-fa (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run2 200 .carry-fa
F='^(TestTowerFrames|TestTowerFrameRows|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTowerPromptRows|TestTowerAttnChoose)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine|TestCompareTakes|TestBenchJSONSaysItsUnits') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
for i in 1 2; do for p in 60 300; do
	T 10 tw-$p-$i $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill $p
done; done
T 50 ties-hot $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties -batch 4,8 -hot-experts -numerics fast
T 40 ties-3 $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties -batch 3 -numerics fast
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 2,3 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 30 take-rule-$i $P $TK
	T 30 take-wide-$i env PROSCENIUM_GPU_TOWER_ATTN=wide $P $TK
done
run_pack
run_tally tests-exact tests-fast engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
grep -h "TestTowerFrameRows/.*/3" $O/tests-fast.log | grep -- "---" | head -12
for i in 1 2; do for p in 60 300; do echo "-- tw $p $i: $(grep -h '^takes' $O/tw-$p-$i.log | cut -c1-40 | tr '\n' ';')"; done; done
for i in 1 2; do for k in rule wide; do echo "-- take $k $i"; grep -hE "^batch [23]" $O/take-$k-$i.log | cut -c1-300; done; done
for f in ties-3 ties-hot; do echo "-- $f"; grep -hE "^near-ties|^batch|error|Error" $O/$f.log | cut -c1-440; done

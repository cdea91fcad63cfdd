#!/bin/bash
# Lead, session 30, run 2 (one call, ≤ 280 s; not lent in session 30: a later session runs it), on main from e62b852
# (run 1's failure mended in the test; bench-take
# -near-ties):
# 1. the tower's tests and the takes together against alone, fast and exact (TestTowerFrameRows as mended: under fast
#    the rule's four and eight rows within 1e-5, eight rows on the wide instances to their bits); the engine's tests
#    with TestCompareTakes and the JSON units check;
# 2. -near-ties at full geometry: each take of four and of eight together against itself alone, under fast (where
#    they part, the deciding logits of both) and under exact (they must not part);
# 3. the tower at three rows, which run 1 measured slower on the rule's wide instances than four rows on the _h128
#    ones: wide / 64 / 128 rows a split at 2, 3, 4 rows from 60 and 300 cache rows, alternating, twice.
# Carried: .carry-fa (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run2 280 .carry-fa
F='^(TestTowerFrames|TestTowerFrameRows|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTowerPromptRows)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine|TestCompareTakes|TestBenchJSONSaysItsUnits') &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
NT="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties"
T 60 ties-fast $P $NT -batch 4,8 -numerics fast
T 45 ties-exact $P $NT -batch 4 -numerics exact
for i in 1 2; do for p in 60 300; do for k in wide 64 128; do
	T 8 tw-$k-$p-$i env PROSCENIUM_GPU_TOWER_ATTN=$k $P bench-tower -synthetic full -rows 2,3,4 -prefill $p
done; done; done
run_pack
run_tally tests-exact tests-fast engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log $O/engine.log | head -16
grep -h "TestTowerFrameRows/.*/\(4\|8\)" $O/tests-fast.log | head -20
for i in 1 2; do for p in 60 300; do for k in wide 64 128; do echo "-- tw $k $p $i: $(grep -h '^takes' $O/tw-$k-$p-$i.log | cut -c1-40 | tr '\n' ';')"; done; done; done
for f in ties-fast ties-exact; do echo "-- $f"; grep -hE "^near-ties|^batch|error|Error" $O/$f.log | cut -c1-330; tail -n 2 $O/$f.log; done

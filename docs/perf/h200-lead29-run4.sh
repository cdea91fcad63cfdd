#!/bin/bash
# Lead, session 29, run 4 (one call, ≤ 300 s), on branch keys29 (main + the tower attention's rows a split as an
# argument of the _h128 instances, $PROSCENIUM_GPU_TOWER_ATTN=K forcing it at every width; the default 64, as main):
# 1. the tower's tests (TestTowerFrames and TestTowerFrameRows with attn-keys-8: tiny caches on several splits,
#    merged) and the takes together against alone, fast and exact;
# 2. the sweep: the tower at 1, 2, 4, 8 rows from 60 and 300 cache rows, wide / 8 / 16 / 32 / 64 / 128 rows a split,
#    alternating, twice;
# 3. profiles of the final code (ncu, each kernel alone, gpu__time_duration and dram bytes): the tower frame at one
#    row, the step at one row and at four rows;
# 4. the take (B = 1, 4) at 64, 16 and 32 rows a split, as far as the budget goes.
# Carried: .carry-fa (h200-lead6-build.sh on keys29).
set -u
. docs/perf/run-lib.sh
run_setup run4 300 .carry-fa
F='^(TestTowerFrames|TestTowerFrameRows|TestTakeFramesMatchAlone|TestTowerPromptRows)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 150 tests-exact $X/cuda.test -test.v -test.run "$F")
wait
TW="bench-tower -synthetic full -rows 1,2,4,8"
for i in 1 2; do for p in 60 300; do for k in wide 8 16 32 64 128; do
	T 8 tw-$k-$p-$i env PROSCENIUM_GPU_TOWER_ATTN=$k $P $TW -prefill $p
done; done; done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--clock-control none --profile-from-start off --graph-profiling node --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum"
T 45 ncu-tower $NCU $S $P bench-tower -synthetic full -profile-frame
T 45 ncu-step $NCU $S $P bench-backbone -synthetic full -profile-step -numerics fast
T 45 ncu-rows4 $NCU $S $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for k in 64 16 32; do T 25 take-$k env PROSCENIUM_GPU_TOWER_ATTN=$k $P $TK; done
run_pack
run_tally tests-exact tests-fast
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -16
grep -h "frames the same" $O/tests-*.log
for p in 60 300; do for i in 1 2; do for k in wide 8 16 32 64 128; do echo "-- tower $k $p $i: $(grep -h '^takes' $O/tw-$k-$p-$i.log | sed 's/, gemvx default//;s/ of weights//;s/ a take//' | cut -c1-60 | tr '\n' ';')"; done; done; done
for k in 64 16 32; do echo "-- take $k"; grep -hE "^take  |batch [14]" $O/take-$k.log | cut -c1-150; grep -h 'batch 4' $O/take-$k.log | grep -o 'real-time factor.*'; done
for f in ncu-tower ncu-step ncu-rows4; do echo "-- $f"; python3 docs/perf/ncu-agg.py $O/$f.log 2>&1 | head -24 | cut -c1-150; done

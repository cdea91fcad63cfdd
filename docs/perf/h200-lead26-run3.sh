#!/bin/bash
# (Run from branch route26, not merged: main has neither its kernels nor PROSCENIUM_GPU_NORM_ROUTE.)
# Lead, session 26, run 3 (one call, ≤ 560 s): route26 — the router in the norm before a step's experts, the shared
# expert's rows in the gate·up's launch. The whole check of session 25 run 4 with the new kernels' tests
# (TestNormRoute, TestMoEGateUpShared) and the cluster norm's, under exact and fast (the prefill paths also with the
# tensor-core attention forced on); the engine's tests; the free-running agreement with the CPU (fast, the
# tensor-core attention forced on: demo 100 seeds, odd 20 with the rounding baseline); then the A/B in one binary
# ($PROSCENIUM_GPU_NORM_ROUTE=0 / unset): bench-backbone at 1, 2, 4, 8 rows and the take (B = 1, 4), twice each,
# alternating. Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run3 560 .carry-fa
whole_check_tests TestNormRoute TestMoEGateUpShared TestNormCluster
run_whole_check
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 14 rows-off-$i env PROSCENIUM_GPU_NORM_ROUTE=0 $P $BB
	T 14 rows-on-$i $P $BB
done
for i in 1 2; do
	T 32 take-off-$i env PROSCENIUM_GPU_NORM_ROUTE=0 $P $TK
	T 32 take-on-$i $P $TK
done
run_pack
run_tally tests-exact tests-fast tests-forced engine
grep -h "^--- FAIL\|^    --- FAIL" $O/tests-*.log | head -12
grep -h -A3 "^--- FAIL\|^    --- FAIL" $O/tests-fast.log | grep -v '^---' | head -20
grep -h "norm_route\|TestNormRoute\|TestMoEGateUpShared" $O/tests-fast.log | grep -v '^=== ' | cut -c1-200 | head -20
agreement_report
for i in 1 2; do for v in off on; do echo "-- rows $v $i"; grep -hE "^B =" $O/rows-$v-$i.log | cut -c1-100; done; done
for i in 1 2; do for v in off on; do echo "-- take $v $i"; grep -hE "^take  |batch [14]|  loop|codes" $O/take-$v-$i.log | cut -c1-180; done; done

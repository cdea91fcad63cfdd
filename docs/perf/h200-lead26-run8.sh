#!/bin/bash
# (Run from branch fuse26, not merged: main has neither its kernel nor PROSCENIUM_GPU_NORM_DENSE.)
# Lead, session 26, run 8 (one call, ≤ 560 s): fuse26 — the norm before a step's experts with the stacked dense
# projection in one launch (add_rmsnorm_zc_dense_cluster_fast), the combine adding the mixer's output. The whole
# check of session 25 run 4 with TestNormDense and the cluster norms' test, under exact and fast (the prefill paths
# also with the tensor-core attention forced on); the engine's tests; the free-running agreement with the CPU (fast,
# the tensor-core attention forced on: demo 100 seeds, odd 20 with the rounding baseline); then the A/B in one binary
# ($PROSCENIUM_GPU_NORM_DENSE=0 / unset, and 32 / 64 dense rows a cluster): bench-backbone at 1, 2, 4, 8 rows, twice
# each, alternating, and the take (B = 1, 4) off / on twice. Carried: .carry-fa (h200-lead6-build.sh).
set -u
. docs/perf/run-lib.sh
run_setup run8 560 .carry-fa
whole_check_tests TestNormDense TestNormCluster
run_whole_check
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 14 rows-off-$i env PROSCENIUM_GPU_NORM_DENSE=0 $P $BB
	T 14 rows-on-$i $P $BB
	T 14 rows-r32-$i env PROSCENIUM_GPU_NORM_DENSE_ROWS=32 $P $BB
	T 14 rows-r64-$i env PROSCENIUM_GPU_NORM_DENSE_ROWS=64 $P $BB
done
for i in 1 2; do
	T 32 take-off-$i env PROSCENIUM_GPU_NORM_DENSE=0 $P $TK
	T 32 take-on-$i $P $TK
done
run_pack
run_tally tests-exact tests-fast tests-forced engine
grep -h -A4 "^--- FAIL\|^    --- FAIL" $O/tests-fast.log $O/tests-exact.log | head -24
grep -h "norm_dense_cuda_test" $O/tests-fast.log | cut -c1-160 | head -10
agreement_report
for i in 1 2; do for v in off on r32 r64; do echo "-- rows $v $i: $(grep -hE '^B =' $O/rows-$v-$i.log | cut -c1-28 | tr '\n' ' ')"; done; done
for i in 1 2; do for v in off on; do echo "-- take $v $i"; grep -hE "^take  |batch [14]|  loop" $O/take-$v-$i.log | cut -c1-200; done; done

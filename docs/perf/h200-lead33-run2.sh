#!/bin/bash
# Lead, session 33, run 2 (one call, ≤ 150 s), on main 58f0132: what run 1 measured on an H100, on the H200 whose
# figures the notebook keeps:
# 1. the tower as built (the attention's rule from three rows) at 1, 2, 3, 4, 8 rows from 60 and 300 cache rows, twice;
# 2. two and three takes at once as built against the wide attention forced, alternating, twice;
# 3. -near-ties at four and eight takes, fast, routing logged (run 1: every jump of a take's logits past the
#    tolerance at a routing flip at a tie of the router).
# Carried: .carry-fa (h200-lead6-build.sh on main).
set -u
. docs/perf/run-lib.sh
run_setup run2 150 .carry-fa
for i in 1 2; do for p in 60 300; do
	T 10 tw-$p-$i $P bench-tower -synthetic full -rows 1,2,3,4,8 -prefill $p
done; done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 2,3 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 30 take-rule-$i $P $TK
	T 30 take-wide-$i env PROSCENIUM_GPU_TOWER_ATTN=wide $P $TK
done
T 60 ties-48 $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -seed-base 3 -near-ties -batch 4,8 -numerics fast
run_pack
run_tally
for i in 1 2; do for p in 60 300; do echo "-- tw $p $i: $(grep -h '^takes' $O/tw-$p-$i.log | cut -c1-40 | tr '\n' ';')"; done; done
for i in 1 2; do for k in rule wide; do echo "-- take $k $i"; grep -hE "^batch [23]" $O/take-$k-$i.log | cut -c1-300; done; done
echo "-- ties-48"; grep -hE "^near-ties|^batch|rror" $O/ties-48.log | cut -c1-420

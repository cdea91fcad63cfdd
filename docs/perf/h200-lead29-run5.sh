#!/bin/bash
# Lead, session 29, run 5 (one call, ≤ 100 s, on the machine run 4 left warm; the command given to the device tool,
# kept here as a script): the take with each choice of the tower attention's rule by width forced at every width —
# B = 1 on the wide instances against 64 rows a split, B = 4 at 128 rows a split against 64 — alternating, twice.
# Carried: .carry-fa (h200-lead6-build.sh on keys29, 22fa255).
set -u
. docs/perf/run-lib.sh
BUDGET_S=100 run_setup run5 100 .carry-fa
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 20 t1-wide-$i env PROSCENIUM_GPU_TOWER_ATTN=wide $P $TK -batch 1
	T 20 t1-64-$i $P $TK -batch 1
	T 20 t4-128-$i env PROSCENIUM_GPU_TOWER_ATTN=128 $P $TK -batch 4
	T 20 t4-64-$i $P $TK -batch 4
done
run_pack
for f in $O/t*.log; do echo "$(basename $f): $(grep -hE 'batch [14] ' $f | cut -c1-170)"; done

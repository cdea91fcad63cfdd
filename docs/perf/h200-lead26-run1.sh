#!/bin/bash
# (Run from branch probe26, whose binaries have the probe; main has no PROSCENIUM_PROBE_STEP.)
# Lead, session 26, run 1 (one call, ≤ 200 s): probe26 — what the MoE's dense projection and its routing cost the
# step as it runs, by leaving them out (PROSCENIUM_PROBE_STEP=nodense / noroute / both: timing only, the values
# wrong), before building the routing into the norm before the experts and the shared expert's gate·up into the
# routed one. bench-backbone at 1, 2, 4, 8 rows, each variant twice, alternating. Carried: .carry-fa.
set -u
. docs/perf/run-lib.sh
run_setup run1 200 .carry-fa
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
for i in 1 2; do
	T 14 base-$i $P $BB
	T 14 nodense-$i env PROSCENIUM_PROBE_STEP=nodense $P $BB
	T 14 noroute-$i env PROSCENIUM_PROBE_STEP=noroute $P $BB
	T 14 both-$i env PROSCENIUM_PROBE_STEP=nodense,noroute $P $BB
done
run_pack
run_tally
for i in 1 2; do for v in base nodense noroute both; do echo "-- $v $i"; grep -hE "^B =" $O/$v-$i.log | cut -c1-110; done; done

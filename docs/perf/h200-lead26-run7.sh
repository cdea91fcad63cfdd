#!/bin/bash
# (Run from branch dense26, whose binaries have the probes; main has neither.)
# Lead, session 26, run 7 (one call, ≤ 100 s): dense26 — does the dense projection cost the path by its bytes or by
# its place? PROSCENIUM_PROBE_ROUTER_ONLY=1 projects the router's 256 rows alone (1 MB; the shared expert's 1025
# rows left out, their values stale: timing only), against the whole projection and probe26's none
# (PROSCENIUM_PROBE_STEP is not on this branch: run 1's figures stand for it). bench-backbone at 1, 2, 4, 8 rows,
# three times each, alternating. Carried: .carry-fa.
set -u
. docs/perf/run-lib.sh
run_setup run7 100 .carry-fa
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
for i in 1 2 3; do
	T 14 whole-$i $P $BB
	T 14 router-$i env PROSCENIUM_PROBE_ROUTER_ONLY=1 $P $BB
done
run_pack
run_tally
for i in 1 2 3; do for v in whole router; do echo "-- $v $i: $(grep -hE '^B =' $O/$v-$i.log | cut -c1-28 | tr '\n' ' ')"; done; done

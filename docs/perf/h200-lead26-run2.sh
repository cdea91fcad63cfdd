#!/bin/bash
# (Run from branch probe26, whose binaries have the probe; main has no PROSCENIUM_PROBE_STEP.)
# Lead, session 26, run 2 (one call, ≤ 150 s): probe26 — what staging the router's weights in the norm before the
# experts would cost (PROSCENIUM_PROBE_STEP=smem: 128 KB of dynamic shared memory a block, nothing copied; stage64 /
# stage: 64 / 128 KB copied by cp.async before the PDL wait), alone and with the dense projection and routing left
# out (timing only). bench-backbone at 1, 2, 4, 8 rows, each variant twice, alternating. Carried: .carry-fa.
set -u
. docs/perf/run-lib.sh
run_setup run2 150 .carry-fa
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
V="base smem stage64 stage nodense,noroute nodense,noroute,stage"
for i in 1 2; do
	for v in $V; do T 14 $v-$i env PROSCENIUM_PROBE_STEP=$v $P $BB; done
done
run_pack
run_tally
for i in 1 2; do for v in $V; do echo "-- $v $i"; grep -hE "^B =" $O/$v-$i.log | cut -c1-60; done; done

#!/bin/bash
# (Run from branch dense26, whose binaries have the probes; main has neither.)
# Lead, session 26, run 6 (one call, ≤ 150 s): dense26 — the MoE's dense projection (1281 × 2048 BF16: router and
# shared expert) ran at 0.86 TB/s alone at four rows (run 5's ncu: 321 blocks of 4 rows, 1.2 waves) and probe26 put
# it at 8 µs a layer on the path at four rows. Its instance by name ($PROSCENIUM_PROBE_DENSE=ONE-ROW,B-ROW), the
# others left as chosen: bench-backbone at 1, 2, 4, 8 rows, each twice, alternating. Carried: .carry-fa.
set -u
. docs/perf/run-lib.sh
run_setup run6 150 .carry-fa
BB="bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast"
V="default t128r4u2,t128r4u1 t128r4u2,t128r4u2 t64r2u4,t64r4u1 t256r4u1,t256r4u1 t32r4u2,t32r4u2"
for i in 1 2; do
	for v in $V; do a=""; [ $v != default ] && a="PROSCENIUM_PROBE_DENSE=$v"; T 14 d-$v-$i env $a $P $BB; done
done
run_pack
run_tally
for i in 1 2; do for v in $V; do echo "-- $v $i: $(grep -hE '^B =' $O/d-$v-$i.log | cut -c1-28 | tr '\n' ' ')"; done; done

#!/bin/bash
# Lead, session 20, run 6 (one call, ≤ 90 s): the backbone's GEMVs with their first weights ahead of the
# PDL wait site by site (an experiment build, not on main: PROSCENIUM_GPU_GEMV_AHEAD_SITES, a list of
# in = the mixers' input projections, out = their output projections, dense = the MoE's dense
# projection; run 3 had all three, the step 2.062 → 2.084 ms). Twice each, alternating.
# Carried: .carry-fx (pgpu.xz: proscenium-gpu of the experiment). Output: stdout.
set -u
xz -dc .carry-fx/pgpu.xz > /tmp/pgpu && chmod +x /tmp/pgpu
for i in 1 2; do
	for s in none in out dense in,out,dense; do
		echo "== $s $i $(PROSCENIUM_GPU_GEMV_AHEAD_SITES=$s timeout 25 /tmp/pgpu bench-backbone -synthetic full -steps 50 -rows 1 -numerics fast 2>&1 | grep '^B = 1' | cut -c1-60)"
	done
done

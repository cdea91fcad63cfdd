#!/bin/bash
# Lead, session 20, run 6b (one call on the machine run 6 left warm, ≤ 60 s): run 6's experiment build with the
# output and dense projections ahead together, against none, at 1, 2 and 4 rows, twice alternating.
# Carried: .carry-fx (pgpu.xz). Output: stdout (in docs/PERF.md "chain20").
xz -dc .carry-fx/pgpu.xz > /tmp/pgpu && chmod +x /tmp/pgpu
for i in 1 2; do for s in none out,dense; do
	echo "== $s $i $(PROSCENIUM_GPU_GEMV_AHEAD_SITES=$s timeout 25 /tmp/pgpu bench-backbone -synthetic full -steps 50 -rows 1,2,4 -numerics fast 2>&1 | grep '^B = ' | cut -c1-40 | tr '\n' ' ')"
done; done

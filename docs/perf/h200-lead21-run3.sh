#!/bin/bash
# Lead, session 21, run 3 (one call, ≤ 90 s): run 2's build; which of the backbone's B-row sites (the output
# projections, the dense one) gains or loses with its first weights ahead, at 2, 4 and 8 rows:
# bench-backbone with PROSCENIUM_GPU_GEMV_AHEAD = tower / tower,out / tower,dense / default, three times
# alternating. Carried: .carry-fa (h200-lead6-build.sh, 07c1dd4). Output: stdout.
set -u
. docs/perf/run-lib.sh
run_setup run3 90 .carry-fa
for i in 1 2 3; do for v in tower tower,out tower,dense out,dense,tower; do
	echo "== $v $i $(env PROSCENIUM_GPU_GEMV_AHEAD=$v timeout 12 $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast 2>&1 | grep '^B = ' | cut -c1-40 | tr '\n' ' ')"
done; done

#!/bin/bash
# (Run from branch route26, not merged: main has neither its kernels nor PROSCENIUM_GPU_NORM_ROUTE.)
# Lead, session 26, run 5 (one call, ≤ 200 s): where route26's step loses — ncu of the step's kernels, each alone
# (gpu__time_duration, dram bytes), at one row (-profile-step) and four (-profile-rows 4), with the router in the norm
# (default) and without (PROSCENIUM_GPU_NORM_ROUTE=0). Carried: .carry-fa (8db900c's bundle).
set -u
. docs/perf/run-lib.sh
run_setup run5 200 .carry-fa
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--clock-control none --profile-from-start off --graph-profiling node --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum"
for v in on off; do
	a=""; [ $v = off ] && a="PROSCENIUM_GPU_NORM_ROUTE=0"
	T 45 ncu-step-$v env $a $NCU $S $P bench-backbone -synthetic full -profile-step -numerics fast
	T 45 ncu-rows4-$v env $a $NCU $S $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
done
run_pack
run_tally
for f in ncu-step-on ncu-step-off ncu-rows4-on ncu-rows4-off; do echo "-- $f"; python3 docs/perf/ncu-agg.py $O/$f.log 2>&1 | head -16 | cut -c1-150; done

#!/bin/bash
# Lead, session 23, run 6 (one call, ≤ 200 s): where the four- and eight-take tower frame's time goes, for the
# next session: ncu of bench-tower -rows 4 and -rows 8 (every kernel of the frame graphs, each alone, the
# 60-row prefill's kernels beside them by name), the final code's kernels. Carried: .carry-fa. Logs: $OUT/run6.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run6 200 .carry-fa
for b in 4 8; do
	command -v ncu > /dev/null && T 90 ncu-tower$b ncu --clock-control none --graph-profiling node --csv \
		--metrics gpu__time_duration.sum,dram__bytes_read.sum $P bench-tower -synthetic full -rows $b -frames 2 -prefill 60
done
run_pack
for b in 4 8; do [ -f $O/ncu-tower$b.log ] && { echo "-- ncu-tower$b"; python3 docs/perf/ncu-agg.py $O/ncu-tower$b.log 2>&1 | head -24; }; done

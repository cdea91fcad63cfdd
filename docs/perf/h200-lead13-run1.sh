#!/bin/bash
# Lead, session 13, run 1 (one call, ≤ 170 s) on the carried ba196f3 binaries (kernels' sm_90 SASS the
# same as main 2d1d155's). What bounds the kernels this session's helpers work on: ncu's sections
# (speed of light, memory, warp states, scheduler, occupancy) for the step's expert kernels and GEMV
# at B = 1 and 4; an nsys timeline
# of the B = 1 and B = 4 step graphs (each kernel's start and end inside the graph: the gaps).
# Carried: .carry-fa. Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 170 .carry-fa
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
NSYS=$(command -v nsys || ls /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda*/bin/nsys 2>/dev/null | head -1)
echo "ncu=$NCU nsys=$NSYS" >> "$O/machine.txt"
S="--clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis"
T 45 ncu-step $NCU $S --graph-profiling node -k 'regex:moe_(down2_fast|gate_up_fp8_t32r4u4)$|gemv_bf16_t128r2u2' --launch-skip 6 --launch-count 6 $P bench-backbone -synthetic full -profile-step -numerics fast
T 45 ncu-rows4 $NCU $S --graph-profiling node -k 'regex:moe_(down2_fast|gate_up_ids_fp8_t32r4u4)$' --launch-skip 4 --launch-count 4 $P bench-backbone -synthetic full -steps 5 -rows 4 -profile-rows 4 -numerics fast
if [ -n "$NSYS" ]; then
	T 40 nsys-step $NSYS profile --cuda-graph-trace=node -t cuda -o $O/step1 -f true $P bench-backbone -synthetic full -steps 20 -rows 1,4 -numerics fast
	T 30 nsys-stats $NSYS stats --report cuda_gpu_trace --format csv -o $O/step1 $O/step1.nsys-rep
	rm -f $O/step1.nsys-rep $O/step1.sqlite
fi
run_pack
cat "$O/steps.log" | grep -E '^(rc=|skipped)' | tr '\n' ' '; echo
for f in ncu-step ncu-rows4; do echo "== $f"; grep -E '^  [a-z_0-9]+.*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|No Eligible|Issued Warp|Block Limit|Dynamic Shared|Static Shared' "$O/$f.log" | head -60; done
ls -la $O | head -30

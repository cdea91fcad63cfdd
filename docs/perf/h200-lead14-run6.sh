#!/bin/bash
# Lead, session 14, run 6 (one call, ≤ 90 s): why the streamed experts (stream14) stop at 1.5-2.5 TB/s:
# ncu's stall reasons (the WarpStateStats metrics, per active warp) of the streamed gate·up and down
# launches of a 300- and a 700-row fast prefill, and of the grouped tiles beside them.
# Carried: .carry-fa (h200-lead6-build.sh, cfd5ba3). Logs: $OUT/run6.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run6 90 .carry-fa
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M='regex:^smsp__warp_issue_stalled_.*_per_warp_active\.pct$,smsp__warps_active.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum'
for n in 300 700; do
  T 25 ncu-stream-$n $NCU --clock-control none --metrics "$M" -k 'regex:gemm_stream_fp8_n' --launch-skip 10 --launch-count 2 $P bench-backbone -synthetic full -numerics fast -prefills $n
  T 25 ncu-tile-$n env PROSCENIUM_GPU_GEMM_STREAM=off $NCU --clock-control none --metrics "$M" -k 'regex:gemm_mma_fp8_h2' --launch-skip 10 --launch-count 2 $P bench-backbone -synthetic full -numerics fast -prefills $n
done
run_pack
run_tally
for f in $O/ncu-*.log; do echo "== $f"; grep -E 'gemm_|stalled|duration|dram__|warps_active|issue_active' $f | awk '{ if ($NF+0 >= 1 || $0 ~ /gemm_|duration|dram|active/) print }' | cut -c1-110; done

#!/bin/bash
# Lead, session 17, run 2 (one call, ≤ 150 s): mma17 with the queries staged by cp.async. Its test
# against the CPU, the attention core's timing, an ncu profile of one tensor-core launch of a
# 700-row prefill (report and its per-instruction page come back), the prefill with the core on /
# off alternating in one process. Carried: .carry-fa. Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 150 .carry-fa
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
(cd engine/cuda && T 60 tests-attn env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestAttentionFlash|TestFlashMMAKernel)$')
(cd engine/cuda && T 40 timing $X/cuda.test -test.v -test.run '^TestAttentionFlashTiming$')
S="--clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section SourceCounters --import-source no"
T 60 ncu $NCU $S -k 'regex:attn_flash_mma' --launch-skip 3 --launch-count 1 -o $O/mma $P bench-backbone -synthetic full -numerics fast -prefills 700
T 20 ncu-src $NCU -i $O/mma.ncu-rep --page source --csv --print-source sass
T 20 ncu-details $NCU -i $O/mma.ncu-rep --page details
T 30 ab $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700 -ab PROSCENIUM_GPU_ATTN_MMA=f16,off
run_pack
run_tally tests-attn
grep -h 'worst vector' $O/tests-attn.log | grep -o 'flash-mmah\? call.*' | awk '{print $1, $NF}' | sort -k2 -g | tail -3
grep -h 'timing flash-mma' $O/timing.log
grep -E 'Duration|Throughput|Eligible|Issued Warp|No Eligible|Stall|Pipe|Occupancy' $O/ncu-details.log | head -40
grep -vE "^\s*$" $O/ab.log | tail -7

#!/bin/bash
# Lead, session 17, run 3 (one call, ≤ 200 s): mma17 with the parts split once a layer
# (attn_mma_parts_fast) and read by cp.async. Its test against the CPU, the backbone's fast prefill
# paths with the tensor-core core forced on (and under exact: the scratch moved), the attention core's timing, ncu of one launch of each
# kernel at 700 rows, the prefill on / off alternating. Carried: .carry-fa. Logs: $OUT/run3.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run3 200 .carry-fa
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
F='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether)$'
(cd engine/cuda && T 60 tests-attn env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestAttentionFlash|TestFlashMMAKernel|TestFlashScratch|TestAttentionFlashRefusesExact)$') &
(cd engine/cuda && T 80 tests-fast env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_MMA=on $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 80 tests-exact $X/cuda.test -test.v -test.run "$F") &
wait
(cd engine/cuda && T 40 timing $X/cuda.test -test.v -test.run '^TestAttentionFlashTiming$')
S="--clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section SourceCounters --import-source no"
T 60 ncu $NCU $S -k 'regex:attn_(flash_mma|mma_parts)' --launch-skip 6 --launch-count 2 -o $O/mma $P bench-backbone -synthetic full -numerics fast -prefills 700
T 20 ncu-src $NCU -i $O/mma.ncu-rep --page source --csv --print-source sass
T 20 ncu-details $NCU -i $O/mma.ncu-rep --page details
T 30 ab $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700 -ab PROSCENIUM_GPU_ATTN_MMA=on,off
T 30 ab2 $P bench-backbone -synthetic full -numerics fast -prefills 300,700 -ab PROSCENIUM_GPU_ATTN_MMA=on,k16
run_pack
run_tally tests-attn tests-fast tests-exact
grep -h 'worst vector' $O/tests-attn.log | grep -o 'flash-mma[-k16]* call.*' | awk '{print $1, $NF}' | sort -k2 -g | tail -3
grep -h 'timing flash-mma' $O/timing.log
grep -E 'attn_|Duration|Issued Warp|Warp Cycles Per Issued|Theoretical Occ' $O/ncu-details.log | head -20
for f in ab ab2; do grep -vE "^\s*$" $O/$f.log | tail -7; done

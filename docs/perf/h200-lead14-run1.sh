#!/bin/bash
# Lead, session 14, run 1 (one call, ≤ 270 s): the streamed grouped experts (stream14, issue 28;
# kernels/gemm_stream.cu, on by default for fast FP8 grouped GEMMs). Correctness first (fast):
# every streamed instance against the CPU, the magnitude classes, refusals, and the backbone's
# fast prefill paths against the CPU through the new default; then alone: one layer's experts
# timed (tile against each instance), the prefill with the streamed experts on / off / on, the
# voices' first audio, the take; an ncu section of the 16- and 32-pair instances.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 270 .carry-fa
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
F='^(TestGemmStreamFP8|TestGemmStreamRefusals|TestGemmF16Range|TestGemmGroupedExperts|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestMoERouteNotANumber)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F")
(cd engine/cuda && T 40 speed env PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmStreamSpeed$')
for m in on off on2 off2; do T 12 prefill-$m env PROSCENIUM_GPU_GEMM_STREAM=${m%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 25 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
S="--clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section SchedulerStats"
for n in 300 700; do T 30 ncu-$n $NCU $S -k 'regex:gemm_stream_fp8_n' --launch-skip 10 --launch-count 2 $P bench-backbone -synthetic full -numerics fast -prefills $n; done
run_pack
run_tally tests-fast speed
grep -h 'stream14' $O/speed.log | cut -c1-400
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f; done
for f in ref10 ref30 take; do echo "-- $f"; grep -hE "uncached|from the cache|^take|first audio  " $O/$f.log | cut -c1-160; done
for n in 300 700; do grep -E 'Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Eligible Warps|Issued Warp|No Eligible|gemm_stream' $O/ncu-$n.log | head -20; done

#!/bin/bash
# Lead, session 16, run 2 (one call, ≤ 300 s): the slab rule (4 slabs only where a pass's X is one
# chunk), dnprep16 (the fast DeltaNet prep by blocks of 16 rows) and gluprep16 (the routed down
# projection's prep makes the SwiGLU). Correctness of each under fast (and the layers under both
# policies), the engine's tests; then alone: the prefill with all three against none alternating
# twice and with each one off, the take and the voices, an ncu duration profile of a 300-row pass.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 300 .carry-fa
F='^(TestGemmStreamFP8|TestGemmStreamSwiGLU|TestGemmStreamRefusals|TestDeltaNetChunkPrepTiled|TestDeltaNetChunkRule|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestBackboneXPartsBits|TestBackboneMoE)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 120 tests-both $X/cuda.test -test.v -test.run '^(TestDeltaNetChunkedLayer|TestBackboneMatchesCPU|TestFramesBeginPromptMatchesTheCPU|TestMoESwiGLU.*)$') &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
base="PROSCENIUM_GPU_GEMM_STREAM_SLABS=1 PROSCENIUM_GPU_DN_PREP=old PROSCENIUM_GPU_GEMM_STREAM_SWIGLU=off"
for m in new base new2 base2; do
	e=""; [ "${m%2}" = base ] && e=$base
	T 25 prefill-$m env $e $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
done
T 25 prefill-slabs1 env PROSCENIUM_GPU_GEMM_STREAM_SLABS=1 $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 25 prefill-prepold env PROSCENIUM_GPU_DN_PREP=old $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 25 prefill-swigluoff env PROSCENIUM_GPU_GEMM_STREAM_SWIGLU=off $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 20 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
T 50 ncu-prefill300 $NCU $M $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
run_pack
run_tally tests-fast tests-both engine
grep -h 'prep: .*differ\|TestGemmStreamSwiGLU\|TestDeltaNetChunkPrepTiled' $O/tests-fast.log | grep -v '=== RUN' | sort | uniq -c | sort -rn | head -8 | cut -c1-160
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-60; done
for f in take ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache|^take  |first audio  " $O/$f.log | cut -c1-160; done
echo "== ncu-prefill300"; python3 docs/perf/ncu-sum.py $O/ncu-prefill300.log > $O/ncu-sum.txt; head -24 $O/ncu-sum.txt; tail -1 $O/ncu-sum.txt

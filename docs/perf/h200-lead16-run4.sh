#!/bin/bash
# Lead, session 16, run 4 (one call, ≤ 240 s): the streamed experts loading each W half as soon as it
# is MMA operands, against the "w" instances (the old order): correctness, TestGemmStreamSpeed (both
# side by side), the prefill A/B'd in one process at the pick of each length; dnprep16 and gluprep16
# A/B'd again with the order alternating (medians). Carried: .carry-fa. Logs: $OUT/run4.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run4 240 .carry-fa
F='^(TestGemmStreamFP8|TestGemmStreamSwiGLU|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached)$'
(cd engine/cuda && T 90 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
(cd engine/cuda && T 60 speed env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmStreamSpeed$')
AB="$P bench-backbone -synthetic full -numerics fast"
T 30 ab-s300 $AB -prefills 300 -ab PROSCENIUM_GPU_GEMM_STREAM=16c2w,16c2
T 30 ab-s700 $AB -prefills 700 -ab PROSCENIUM_GPU_GEMM_STREAM=32c1w,32c1
T 30 ab-s60 $AB -prefills 60 -ab PROSCENIUM_GPU_GEMM_STREAM=8c4w,8c4
T 40 ab-prep $AB -prefills 60,300,700 -ab PROSCENIUM_GPU_DN_PREP=old,tiled
T 40 ab-swiglu $AB -prefills 60,300,700 -ab PROSCENIUM_GPU_GEMM_STREAM_SWIGLU=off,on
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
T 50 ncu-prefill300 $NCU $M $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
run_pack
run_tally tests-fast engine speed
grep -h 'stream14 layer' $O/speed.log | sed 's/gemm_stream_fp8_//g' | cut -c1-500
for f in ab-s60 ab-s300 ab-s700 ab-prep ab-swiglu; do echo "-- $f"; grep -E '^(rows|60|300|700) ' $O/$f.log; done
echo "== ncu-prefill300"; python3 docs/perf/ncu-sum.py $O/ncu-prefill300.log > $O/ncu-sum.txt; head -6 $O/ncu-sum.txt; tail -1 $O/ncu-sum.txt

#!/bin/bash
# Lead, session 16, run 3 (one call, ≤ 260 s): dnprep16 and gluprep16 (16-byte loads) A/B'd inside one
# process each (bench-backbone -ab), xp15 and split-K "short" the same way; their correctness under fast; an
# ncu duration profile of a 300-row pass. Carried: .carry-fa. Logs: $OUT/run3.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run3 260 .carry-fa
F='^(TestGemmStreamFP8|TestGemmStreamSwiGLU|TestDeltaNetChunkPrepTiled|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestBackboneMoE)$'
(cd engine/cuda && T 90 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 90 tests-short env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=short $X/cuda.test -test.v -test.run '^(TestBackboneMatchesCPU|TestBackboneXPartsBits|TestGemmXParts)$') &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
T 40 ab-prep $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700 -ab PROSCENIUM_GPU_DN_PREP=old,tiled
T 40 ab-swiglu $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700 -ab PROSCENIUM_GPU_GEMM_STREAM_SWIGLU=off,on
T 40 ab-xparts $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700 -ab PROSCENIUM_GPU_GEMM_XPARTS=off,on
T 40 ab-splitk $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700 -ab PROSCENIUM_GPU_GEMM_SPLITK=on,short
T 25 prefill $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
T 50 ncu-prefill300 $NCU $M $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
run_pack
run_tally tests-fast tests-short engine
for f in ab-prep ab-swiglu ab-xparts ab-splitk; do echo "-- $f"; grep -E '^(rows|60|300|700) ' $O/$f.log; done
echo "-- prefill"; grep -E '^(60|300|700) ' $O/prefill.log | cut -c1-60
echo "== ncu-prefill300"; python3 docs/perf/ncu-sum.py $O/ncu-prefill300.log > $O/ncu-sum.txt; head -24 $O/ncu-sum.txt; tail -1 $O/ncu-sum.txt

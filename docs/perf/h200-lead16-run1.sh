#!/bin/bash
# Lead, session 16, run 1 (one call, ≤ 330 s): slab16 — the streamed experts with 2 or 4 slabs of
# 128 W rows a block, and the prefill's rows left on the device. Correctness of the streamed
# instances (every slab count against the one-slab bits and the CPU) and of the fast prefill
# paths; the engine's tests; then alone: every streamed instance timed on one full-geometry
# layer, the prefill with one slab against the rule alternating twice (wall and device time),
# the take and the voices, and an ncu duration profile of a 300-row pass.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 330 .carry-fa
F='^(TestGemmStreamFP8|TestGemmStreamRefusals|TestGemmF16Range|TestChooseGemmStream|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestBackboneXPartsBits)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 120 tests-exact $X/cuda.test -test.v -test.run '^(TestBackboneMatchesCPU|TestFramesBeginPromptMatchesTheCPU|TestFramesPrefixCacheMatchesUncached)$') &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
(cd engine/cuda && T 60 speed env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmStreamSpeed$')
for m in 1 rule 1b ruleb; do
	s=${m%b}; [ "$s" = rule ] && s=
	T 25 prefill-$m env PROSCENIUM_GPU_GEMM_STREAM_SLABS=$s $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
done
T 20 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
T 50 ncu-prefill300 $NCU $M $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
run_pack
run_tally tests-fast tests-exact engine speed
grep -h 'stream14 layer' $O/speed.log | cut -c1-400
grep -h 'stream14 experts' $O/speed.log | sed 's/gemm_stream_fp8_//g' | cut -c1-600
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-60; done
for f in take ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache|^take  |first audio  " $O/$f.log | cut -c1-160; done
echo "== ncu-prefill300"; python3 docs/perf/ncu-sum.py $O/ncu-prefill300.log | head -12; python3 docs/perf/ncu-sum.py $O/ncu-prefill300.log | tail -1

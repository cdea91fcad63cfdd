#!/bin/bash
# Lead, session 14, run 8 (one call, ≤ 200 s): the final code (245b4a9: stream14's default instances
# n8c4, n16c2, n24c2, n32c1). Every streamed instance against the CPU, the fast prefill paths through
# the default and the engine's tests; then alone: the prefill on / off alternating twice, one layer's
# experts, the take (B = 1, 4) and the voices.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run8.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run8 200 .carry-fa
F='^(TestGemmStreamFP8|TestGemmStreamRefusals|TestGemmF16Range|TestGemmGroupedExperts|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestMoERouteNotANumber)$'
(cd engine/cuda && T 110 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
for m in on off on2 off2; do T 10 prefill-$m env PROSCENIUM_GPU_GEMM_STREAM=${m%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
(cd engine/cuda && T 30 speed env PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmStreamSpeed$')
T 40 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
run_pack
run_tally tests-fast engine speed
grep -h 'stream14 layer' $O/speed.log | cut -c1-400
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-40; done
echo "-- take"; grep -hE "^take  |takes after|first audio  |batch [14]" $O/take.log | cut -c1-200
for f in ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done

#!/bin/bash
# Lead, session 14, run 4 (one call, ≤ 200 s): the streamed grouped experts with the register ring's
# depth a template parameter (stream14, issue 28): correctness of every instance and the fast prefill
# paths through the default (two steps), then alone: one layer's experts on the tile and every
# instance, the prefill with the families on (2 steps) / d3 / d4 / off alternating twice, the voices.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run4.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run4 200 .carry-fa
F='^(TestGemmStreamFP8|TestGemmStreamRefusals|TestGemmF16Range|TestGemmGroupedExperts|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestMoERouteNotANumber)$'
(cd engine/cuda && T 110 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F")
(cd engine/cuda && T 40 speed env PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmStreamSpeed$')
for m in on d3 d4 off on2 d32 d42 off2; do T 12 prefill-$m env PROSCENIUM_GPU_GEMM_STREAM=${m%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
run_pack
run_tally tests-fast speed
grep -h 'stream14 layer' $O/speed.log | cut -c1-600
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-40; done
for f in ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done

#!/bin/bash
# Lead, session 14, run 9 (one call, ≤ 150 s): stream14's ring instances (each warp's W steps in a
# cp.async ring in shared memory, a ninth warp copying X; PROSCENIUM_GPU_GEMM_STREAM=ring) against
# the register-ring default (on) and the tiles (off). Every instance against the CPU, the fast
# prefill paths through ring and through the default, the engine's tests; then alone: one layer's
# experts on every instance, the prefill on / ring / off alternating twice, the take and the voices
# with the faster family.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run9.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run9 150 .carry-fa
F='^(TestGemmStreamFP8|TestGemmStreamRefusals|TestGemmF16Range|TestGemmGroupedExperts|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestMoERouteNotANumber)$'
B='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether)$'
(cd engine/cuda && T 100 tests-ring env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_STREAM=ring $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 100 tests-on env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$B") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
(cd engine/cuda && T 30 speed env PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmStreamSpeed$')
for m in on ring off on2 ring2 off2; do T 10 prefill-$m env PROSCENIUM_GPU_GEMM_STREAM=${m%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
# The take and the voices with the family whose 300- and 700-row prefills were faster in sum.
sum() { cat $O/prefill-$1.log $O/prefill-${1}2.log | awk '$1 == 300 || $1 == 700 { s += $2 } END { print s + 0 }'; }
m=$(awk -v r="$(sum ring)" -v o="$(sum on)" 'BEGIN { print (r > 0 && r < o) ? "ring" : "on" }'); echo "faster: $m (ring $(sum ring), on $(sum on))" > $O/faster.log
T 15 take-$m env PROSCENIUM_GPU_GEMM_STREAM=$m $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
T 15 ref10-$m env PROSCENIUM_GPU_GEMM_STREAM=$m $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 15 ref30-$m env PROSCENIUM_GPU_GEMM_STREAM=$m $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
run_pack
run_tally tests-ring tests-on engine speed
grep -h 'stream14 layer' $O/speed.log | cut -c1-600
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-40; done
cat $O/faster.log; for f in take-$m ref10-$m ref30-$m; do echo "-- $f"; grep -hE "uncached|from the cache|^take  |first audio  " $O/$f.log | cut -c1-160; done

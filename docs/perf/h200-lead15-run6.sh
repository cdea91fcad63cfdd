#!/bin/bash
# Lead, session 15, run 6 (one call, ≤ 90 s): after the review's refactor (the four producers of X
# parts through one helper, Queue.withXParts; the held marker without a lock): xp15's tests and the
# fast prefill paths (default; every projection split), the engine's tests, the prefill on / off.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run6.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run6 90 .carry-fa
F='^(TestXPartsNormTails|TestBackboneXPartsBits|TestGemmXParts|TestGemmXPartsTailSplit|TestGemmXPartsRouting|TestMoECombineNorm|TestBackboneRowsAndAddNorm|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestTakeFramesBeginTogether)$'
(cd engine/cuda && T 70 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 70 tests-all env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=all $X/cuda.test -test.v -test.run '^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestBackboneXPartsBits)$') &
(cd engine/cuda && T 70 tests-exact $X/cuda.test -test.v -test.short -test.run "$F") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
for m in on off on2 off2; do T 10 prefill-$m env PROSCENIUM_GPU_GEMM_XPARTS=${m%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
run_pack
run_tally tests-fast tests-all tests-exact engine
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-40; done

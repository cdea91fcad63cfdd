#!/bin/bash
# Lead, session 15, run 3 (one call, ≤ 150 s): xp15 with the norm tails writing their rows' X parts
# (add_rmsnorm_zc_xp_fast, moe_combine_norm_xp_fast) and the GEMMs on them skipping their prep.
# The tails' tests (both policies), the X-parts tests, the fast prefill paths (default; every
# projection split), the engine's tests; then alone: the dense GEMMs, the prefill off / on
# alternating twice, the take and the voices.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run3.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run3 150 .carry-fa
F='^(TestXPartsNormTails|TestMoECombineNorm|TestBackboneRowsAndAddNorm|TestGemmXParts|TestGemmXPartsTailSplit|TestGemmXPartsRouting|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether)$'
B='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached)$'
(cd engine/cuda && T 100 tests-on env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 100 tests-all env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=all $X/cuda.test -test.v -test.run "$B") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
(cd engine/cuda && T 40 speed env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmXPartsSpeed$')
for m in off on off2 on2; do T 10 prefill-$m env PROSCENIUM_GPU_GEMM_XPARTS=${m%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
T 15 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
T 15 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 15 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
run_pack
run_tally tests-on tests-all engine speed
grep -h 'prefill.s dense' $O/speed.log | cut -c1-220
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-40; done
for f in take ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache|^take  |first audio  " $O/$f.log | cut -c1-160; done

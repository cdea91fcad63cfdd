#!/bin/bash
# Lead, session 15, run 2 (one call, ≤ 200 s): xp15 with the tail split (gemmXPartsTail: a 700-row
# DeltaNet in's W rows of four whole rounds on the 128 × 64 tile, the last 64 on the split tile) and
# every gemm.cu kernel but the new ones the same SASS as before xp15. The X-parts tests, the split
# tile, the fast prefill paths (default; every projection split); the dense GEMMs timed q tile
# against x parts under fast numerics (run 1 timed exact's by mistake); the prefill off / on
# alternating twice; ncu's sections (speed of light, memory, warp states) of the 128 × 64 x-parts
# tile and the q tile at 700 rows and the streamed experts at 300; the take and the voices.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 200 .carry-fa
F='^(TestGemmXParts|TestGemmXPartsTailSplit|TestGemmXPartsRouting|TestGemmSplitK|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether)$'
B='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached)$'
(cd engine/cuda && T 100 tests-on env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 100 tests-all env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=all $X/cuda.test -test.v -test.run "$B") &
wait
(cd engine/cuda && T 40 speed env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmXPartsSpeed$')
for m in off on off2 on2; do T 10 prefill-$m env PROSCENIUM_GPU_GEMM_XPARTS=${m%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
S="--clock-control none --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy --launch-skip 3 --launch-count 1"
T 40 ncu-xp700 $NCU $S -k 'regex:gemm_xp_bf16_m128n64q$' $P bench-backbone -synthetic full -prefill 700 -profile-prefill -numerics fast
T 40 ncu-q700 env PROSCENIUM_GPU_GEMM_XPARTS=off $NCU $S -k 'regex:gemm_mma_bf16_p3m128n64q$' $P bench-backbone -synthetic full -prefill 700 -profile-prefill -numerics fast
T 40 ncu-stream300 $NCU $S -k 'regex:gemm_stream_fp8_n16c2$' $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
T 15 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
T 15 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 15 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
run_pack
run_tally tests-on tests-all speed
grep -h 'xp15' $O/speed.log | cut -c1-220
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-40; done
for f in ncu-xp700 ncu-q700 ncu-stream300; do echo "== $f"; grep -E 'Duration|Throughput|Busy|Issue Slots|Executed Ipc|Achieved Occupancy|Stall|Hit Rate|Bank' $O/$f.log | head -30; done
for f in take ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache|^take  |first audio  " $O/$f.log | cut -c1-160; done

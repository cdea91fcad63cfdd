#!/bin/bash
# Lead, session 15, run 1 (one call, ≤ 170 s): xp15 — the fast prefill's dense GEMMs with X split
# into its three BF16 parts once a launch (gemm_xp_prep) and read by ldmatrix (GEMM_MMA_XP). Every
# X-parts entry against its q tile's bits and the CPU, the routing, the split-K tile, the fast
# prefill paths through the default (on) and with every projection split (SPLITK=all: the tiny
# checkpoints' GEMMs through the split X-parts entry); then alone: the dense GEMMs q tile against x
# parts, the prefill off / on alternating twice, ncu's per-kernel time of a 300- and a 700-row prefill
# (on), the take and the voices.
# Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 170 .carry-fa
F='^(TestGemmXParts|TestGemmXPartsRouting|TestGemmSplitK|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether)$'
B='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached)$'
(cd engine/cuda && T 100 tests-on env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd engine/cuda && T 100 tests-all env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_GEMM_SPLITK=all $X/cuda.test -test.v -test.run "$B") &
(cd cmd/proscenium-gpu && T 60 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
wait
(cd engine/cuda && T 30 speed env PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmXPartsSpeed$')
for m in off on off2 on2; do T 10 prefill-$m env PROSCENIUM_GPU_GEMM_XPARTS=${m%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
T 40 ncu-prefill300 $NCU $M $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
T 40 ncu-prefill700 $NCU $M $P bench-backbone -synthetic full -prefill 700 -profile-prefill -numerics fast
T 15 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
T 15 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 15 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
run_pack
run_tally tests-on tests-all engine speed
grep -h 'xp15' $O/speed.log | cut -c1-220
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-40; done
for f in ncu-prefill300 ncu-prefill700; do echo "== $f"; python3 docs/perf/ncu-sum.py $O/$f.log | head -24; done
for f in take ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache|^take  |first audio  " $O/$f.log | cut -c1-160; done

#!/bin/bash
# Lead, session 17, run 1 (one call, ≤ 260 s): mma17, the prompt attention on the tensor cores.
# Its test against the CPU (every kernel, both shapes, every split), the backbone's fast prefill paths
# with the tensor-core core forced on (the tiny checkpoints' passes are shorter than 128 rows), the
# attention core's timing at full geometry, then the prefill with the core on / off alternating in
# one process and twice by default. Carried: .carry-fa. Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 260 .carry-fa
F='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether)$'
(cd engine/cuda && T 90 tests-attn env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestAttentionFlash|TestFlashMMAKernel|TestAttentionFlashRefusesExact|TestFlashSplits)$') &
(cd engine/cuda && T 90 tests-fast env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_MMA=f16 $X/cuda.test -test.v -test.run "$F") &
wait
(cd engine/cuda && T 60 timing $X/cuda.test -test.v -test.run '^TestAttentionFlashTiming$')
T 40 ab $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700 -ab PROSCENIUM_GPU_ATTN_MMA=f16,off
T 40 ab2 $P bench-backbone -synthetic full -numerics fast -prefills 300,700 -ab PROSCENIUM_GPU_ATTN_MMA=f16,bf16
for i in 1 2; do T 12 prefill$i $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
run_pack
run_tally tests-attn tests-fast
grep -h 'worst vector' $O/tests-attn.log | grep -o 'flash-mmah\? call.*' | awk '{print $1, $NF}' | sort -k2 -g | tail -4
grep -h 'timing' $O/timing.log
for f in ab ab2; do grep -vE "^\s*$" $O/$f.log | tail -10; done
for i in 1 2; do echo "-- prefill$i"; grep -E '^(60|300|700) ' $O/prefill$i.log | cut -c1-60; done

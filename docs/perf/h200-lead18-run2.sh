#!/bin/bash
# Lead, session 18, run 2 (one call, ≤ 200 s): the tensor-core attention's second in-kernel merge
# (every split's loads in flight; run 1's first merge made the kernel 86.5 µs a layer). The attention
# tests with the merge in the kernel and by the combine; the backbone's fast prefill paths against the
# CPU; the attention core's timing both ways; the prefill with the merge in the kernel / by the combine
# alternating in one process (-ab); the prefill three times by default; ncu of a 300-row pass; the
# voices. Carried: .carry-fa. Logs: $OUT/run2.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run2 200 .carry-fa
FF='^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether)$'
(cd engine/cuda && T 60 tests-attn env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestAttentionFlash|TestFlashMMAKernel|TestFlashScratch|TestAttentionLayer|TestAttentionCoreBlocks|TestAttentionCoreBits)$') &
(cd engine/cuda && T 60 tests-attn-combine env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_MERGE=combine $X/cuda.test -test.v -test.run '^(TestAttentionFlash)$') &
(cd engine/cuda && T 90 tests-forced env PROSCENIUM_TEST_NUMERICS=fast PROSCENIUM_GPU_ATTN_MMA=on $X/cuda.test -test.v -test.run "$FF") &
wait
(cd engine/cuda && T 40 timing $X/cuda.test -test.v -test.run '^TestAttentionFlashTiming$')
(cd engine/cuda && T 40 timing-combine env PROSCENIUM_GPU_ATTN_MERGE=combine $X/cuda.test -test.v -test.run '^TestAttentionFlashTiming$')
T 30 ab $P bench-backbone -synthetic full -numerics fast -prefills 300,700 -ab PROSCENIUM_GPU_ATTN_MERGE=kernel,combine
for i in 1 2 3; do T 12 prefill$i $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
M="--clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum --csv"
T 40 ncu-prefill300 $NCU $M $P bench-backbone -synthetic full -prefill 300 -profile-prefill -numerics fast
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
run_pack
run_tally tests-attn tests-attn-combine tests-forced
for f in tests-attn tests-attn-combine; do grep -h 'worst vector' $O/$f.log | grep -o 'flash-mma[-k32]* call.*' | awk '{print $1, $NF}' | sort -k2 -g | tail -2; done
for f in timing timing-combine; do echo "-- $f"; grep -h 'timing flash-mma' $O/$f.log; done
grep -vE "^\s*$" $O/ab.log | tail -5
for i in 1 2 3; do echo "-- prefill$i"; grep -E '^(60|300|700) ' $O/prefill$i.log | cut -c1-40; done
python3 docs/perf/ncu-sum.py $O/ncu-prefill300.log > $O/ncu-prefill300.sum; grep -E 'attn_|total' $O/ncu-prefill300.sum
echo "-- ref10"; grep -hE "uncached|from the cache" $O/ref10.log | cut -c1-160

#!/bin/bash
# Lead, session 24, run 3 (one call, ≤ 240 s): the codec's halo kernels (c2d0cc7). Their tests (the same bits as
# codec_conv_gemm at every block size) and the codec's (goldens, S2 against the CPU, chunked = whole, the takes' PCM);
# then alone bench-codec's stages with PROSCENIUM_GPU_CODEC_HALO = 0 / auto / 64 / 128 / 256, and the take (B = 1, 4)
# with 0 / auto twice, alternating. Carried: .carry-fa (h200-lead6-build.sh). Logs: $OUT/run3.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run3 240 .carry-fa
F='^(TestCodecConvGEMMHalo|TestCodecConvGEMMKernel|TestCodecGPUBadInput|TestCodecGPUChunkedEqualsWhole|TestCodecGPUMatchesReference|TestCodecBytes|TestTakeFramesPCMMatchesAlone|TestFramesTwoAhead)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F")
for v in 0 auto 64 128 256; do
	T 20 codec-$v env PROSCENIUM_GPU_CODEC_HALO=$v $P bench-codec -synthetic s2 -stages -repeats 3
done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do for v in 0 auto; do
	T 30 take-$v-$i env PROSCENIUM_GPU_CODEC_HALO=$v $P $TK
done; done
run_pack
run_tally tests-fast
grep -hE "^(--- FAIL|    codec|.*halo)" $O/tests-fast.log | head -5
for v in 0 auto 64 128 256; do echo "-- codec $v: $(grep -hE 'streaming|first frame|whole' $O/codec-$v.log | awk '{print $(NF-3), $(NF-2)}' | tr '\n' ' ')"; grep -hE '^ +[0-9]+ ' $O/codec-$v.log | awk '{printf "%s ", $(NF-1)}'; echo; done
for i in 1 2; do for v in 0 auto; do echo "-- take $v $i"; grep -hE "^take  |codec  |batch [14]|  loop" $O/take-$v-$i.log | cut -c1-180; done; done

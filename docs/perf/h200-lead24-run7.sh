#!/bin/bash
# Lead, session 24, run 7 (one call, ≤ 240 s): the codec's ring four stages deep and codec_conv_gemm_deep for one row
# tile (1286dd8) against 407afc4's three-stage ring (.carry-fo, h200-lead24-build-old.sh). The codec's tests with the
# deep kernel's (the same bits as codec_conv_gemm at one row tile); bench-codec old / new without the deep kernel /
# new, twice, alternating (the whole decode's digest must stay f5b6c26e); the take (B = 1, 4) old / new twice.
# Carried: .carry-fa (h200-lead6-build.sh) and .carry-fo. Logs: $OUT/run7.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run7 240 .carry-fa
bash docs/perf/h200-lead6-unpack.sh .carry-fo $ROOT/.carry-o >> $O/unpack.log 2>&1
F='^(TestCodecConvGEMMDeep|TestCodecConvGEMMKernel|TestCodecGPUBadInput|TestCodecGPUChunkedEqualsWhole|TestCodecGPUMatchesReference|TestCodecBytes|TestTakeFramesPCMMatchesAlone|TestFramesTwoAhead)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F")
for i in 1 2; do
	T 20 codec-old-$i $ROOT/.carry-o/proscenium-gpu bench-codec -synthetic s2 -stages -repeats 3
	T 20 codec-ring-$i env PROSCENIUM_GPU_CODEC_DEEP=0 $P bench-codec -synthetic s2 -stages -repeats 3
	T 20 codec-new-$i $P bench-codec -synthetic s2 -stages -repeats 3
done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do
	T 30 take-old-$i $ROOT/.carry-o/proscenium-gpu $TK
	T 30 take-new-$i $P $TK
done
run_pack
run_tally tests-fast
grep -h "^--- FAIL" $O/tests-fast.log | head -5
for i in 1 2; do for v in old ring new; do echo "-- codec $v $i: $(grep -hE 'streaming|first frame|whole decode' $O/codec-$v-$i.log | sed 's/  */ /g' | tr '\n' '|')"; grep -hE '^ +[0-9]+ ' $O/codec-$v-$i.log | awk '{printf "%s ", $(NF-1)}'; echo; done; done
for i in 1 2; do for v in old new; do echo "-- take $v $i"; grep -hE "^take  |first audio  |codec  |batch [14]|  loop" $O/take-$v-$i.log | cut -c1-180; done; done

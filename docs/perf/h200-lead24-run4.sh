#!/bin/bash
# Lead, session 24, run 4 (one call, ≤ 240 s): the codec's tail specialised by mode (407afc4) against the code before
# it (.carry-fo, h200-lead24-build-old.sh on 2b4ce2d's parent state). The codec's tests (goldens, S2 against the CPU,
# chunked = whole, the takes' PCM); bench-codec with each binary twice, alternating (the whole decode's samples'
# digest must match: the same bits); the take (B = 1, 4) with each twice, alternating.
# Carried: .carry-fa (h200-lead6-build.sh) and .carry-fo. Logs: $OUT/run4.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run4 240 .carry-fa
bash docs/perf/h200-lead6-unpack.sh .carry-fo $ROOT/.carry-o >> $O/unpack.log 2>&1
declare -A B=([new]=$P [old]=$ROOT/.carry-o/proscenium-gpu)
F='^(TestCodecConvGEMMKernel|TestCodecGPUBadInput|TestCodecGPUChunkedEqualsWhole|TestCodecGPUMatchesReference|TestCodecBytes|TestTakeFramesPCMMatchesAlone|TestFramesTwoAhead)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F")
for i in 1 2; do for v in old new; do
	T 20 codec-$v-$i ${B[$v]} bench-codec -synthetic s2 -stages -repeats 3
done; done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do for v in old new; do
	T 30 take-$v-$i ${B[$v]} $TK
done; done
run_pack
run_tally tests-fast
grep -h "^--- FAIL" $O/tests-fast.log | head -5
for i in 1 2; do for v in old new; do echo "-- codec $v $i: $(grep -hE 'streaming|first frame|whole decode \(' $O/codec-$v-$i.log | awk '{print $(NF-3), $(NF-2)}' | tr '\n' ' ') $(grep -h digest $O/codec-$v-$i.log | awk '{print $NF}')"; grep -hE '^ +[0-9]+ ' $O/codec-$v-$i.log | awk '{printf "%s ", $(NF-1)}'; echo; done; done
for i in 1 2; do for v in old new; do echo "-- take $v $i"; grep -hE "^take  |codec  |batch [14]|  loop" $O/take-$v-$i.log | cut -c1-180; done; done

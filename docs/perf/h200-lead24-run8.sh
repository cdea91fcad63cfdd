#!/bin/bash
# Lead, session 24, run 8 (one call, ≤ 300 s): the final code (0f993b1: the codec's tail by mode and its four-stage
# ring; run 7 measured the ring against 407afc4 in one call, the carry's limit leaves no room for .carry-fo here). While serve --ui loads a full-size checkpoint: the codec's, the takes' and the
# frames' tests under fast and exact, the engine's. Then alone: bench-codec twice (the whole
# decode's digest must stay f5b6c26e); the take (B = 1, 4) twice; the take of the Current figures (six takes,
# two rounds); then serve: a new voice and requests in it, four concurrent requests, the studio's service.
# Carried: .carry-fa, .carry-fb (h200-lead6-build.sh). Logs: $OUT/run8.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run8 300 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
F='^(TestCodecConvGEMMKernel|TestCodecGPUBadInput|TestCodecGPUChunkedEqualsWhole|TestCodecGPUMatchesReference|TestCodecBytes|TestCodecEncoderGoldens|TestTakeFramesPCMMatchesAlone|TestTakeFramesMatchAlone|TestFramesTwoAhead|TestFramesPrefixCacheMatchesUncached)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 120 tests-exact $X/cuda.test -test.v -test.run "$F")
wait $(jobs -p | grep -v "^$LOADER$") 2>/dev/null; sleep 1
for i in 1 2; do T 20 codec-new-$i $P bench-codec -synthetic s2 -stages -repeats 3; done
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -batch 1,4 -seed-base 3 -numerics fast"
for i in 1 2; do T 30 take-new-$i $P $TK; done
T 40 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -seed-base 3 -numerics fast
wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py 18100 4
T 40 studio python3 docs/perf/h200-lead12-studio.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
run_pack
run_tally tests-exact tests-fast engine
for i in 1 2; do for v in new; do echo "-- codec $v $i: $(grep -hE 'streaming|first frame|whole decode' $O/codec-$v-$i.log | sed 's/  */ /g' | tr '\n' '|')"; grep -hE '^ +[0-9]+ ' $O/codec-$v-$i.log | awk '{printf "%s ", $(NF-1)}'; echo; done; done
for f in take-new-1 take-new-2 take; do echo "-- $f"; grep -hE "^take  |takes after|first audio  |  frame  |codec  |batch [14]|  loop" $O/$f.log | cut -c1-180; done
echo "-- product"; cat $O/load.log | cut -c1-120; tail -n 6 $O/product.log; tail -n 5 $O/connected1.log; tail -n 6 $O/studio.log | cut -c1-330

#!/bin/bash
# Lead, session 12, run 1 (one call, ≤ 560 s) on int12 = main 83ae556 + tower33 + dense33 (their new
# paths off by default). While serve --ui loads a full-size checkpoint: cuda.test -test.short to its end
# (exact), the tests session 11's last commits changed and never ran on a GPU (TestFusedStep's count,
# the eventPair / derived frame index through the take-set and two-ahead tests, the GEMM tests' shared
# cases) under fast, the engine tests. Then, alone, the two waiting branches' scripts (tower33: the lean
# draw; dense33: split-K and the deep ring), each timing its path against the default in one run. Then
# the product through serve: a new 10 s voice by the speech API and two requests in it, four concurrent
# requests, and the studio's service (CreateVoice, SpeakCast twice, the readout after each).
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh). Logs: $OUT/run1.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run1 540 .carry-fa .carry-fb
run_serve 18100 &
LOADER=$!
F='^(TestFusedStep|TestFramesTwoAhead|TestTakeFramesMatchAlone|TestTakeFramesBeginTogether|TestTakeFramesPCMMatchesAlone|TestFramesPrefixCacheMatchesUncached|TestGemmMmaVariants|TestGemmWide|TestGemmGroupedExperts|TestBackboneMatchesCPU|TestBackboneStepRowsMatchTakesAlone|TestMoERouteNotANumber)$'
(cd engine/cuda && T 150 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
(cd engine/cuda && T 260 tests-short $X/cuda.test -test.v -test.short)
wait $(jobs -p | grep -v "^$LOADER$") 2>/dev/null; sleep 1
T 62 tower33 bash docs/perf/h200-tower33.sh $X $O/tower33
T 62 dense33 bash docs/perf/h200-dense33.sh $X $O/dense33
wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py 18100 4
T 40 studio python3 docs/perf/h200-lead12-studio.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
run_pack
run_tally tests-short tests-fast engine
echo "===== tower33"; tail -n 32 $O/tower33.log | cut -c1-200
echo "===== dense33"; tail -n 40 $O/dense33.log | cut -c1-260
echo "===== product"; cat $O/load.log | cut -c1-200; tail -n 6 $O/product.log; tail -n 8 $O/connected1.log; tail -n 8 $O/studio.log | cut -c1-300

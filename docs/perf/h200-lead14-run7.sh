#!/bin/bash
# Lead, session 14, run 7 (one call, ≤ 320 s): stream14's accumulator chains (c, c4 families) against
# one chain (on) and the tiles (off). While serve --ui loads a full-size checkpoint with the c family:
# every streamed instance against the CPU and the fast prefill paths through the c family, the engine's
# tests, the free-running agreement (fast, c). Then alone: one layer's experts on every instance, the
# prefill alternating on / c / c4 / off twice, the take and the voices with c, and the product
# through serve (c): a new 10 s voice, four concurrent requests, the studio's readout.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh). Logs: $OUT/run7.tgz.
set -u
. docs/perf/run-lib.sh
run_setup run7 320 .carry-fa .carry-fb
export PROSCENIUM_GPU_GEMM_STREAM=c
run_serve 18100 &
LOADER=$!
F='^(TestGemmStreamFP8|TestGemmStreamRefusals|TestGemmF16Range|TestGemmGroupedExperts|TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestFramesPrefixCacheMatchesUncached|TestFramesBeginPromptMatchesTheCPU|TestTakeFramesBeginTogether|TestMoERouteNotANumber)$'
(cd engine/cuda && T 120 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run "$F") &
(cd cmd/proscenium-gpu && T 90 engine $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngine') &
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 90 agree-demo-fast $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 50 agree-odd-fast $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json )
wait $(jobs -p | grep -v "^$LOADER$") 2>/dev/null; sleep 1
(cd engine/cuda && T 40 speed env PROSCENIUM_GEMM_SPEED=1 $X/cuda.test -test.v -test.run '^TestGemmStreamSpeed$')
for m in on c c4 off on2 c2 c42 off2; do T 10 prefill-$m env PROSCENIUM_GPU_GEMM_STREAM=${m%2} $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700; done
T 25 take $P bench-take -synthetic full -prompt 60 -frames 300 -takes 3 -numerics fast
T 20 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 20 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
T 25 connected1 python3 docs/perf/h200-lead9-concurrent.py 18100 4
T 40 studio python3 docs/perf/h200-lead12-studio.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
run_pack
run_tally tests-fast engine speed
grep -h 'stream14 layer' $O/speed.log | cut -c1-700
for f in $O/prefill-*.log; do echo "-- $f"; grep -E '^(60|300|700) ' $f | cut -c1-40; done
for f in take ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache|^take  |first audio  " $O/$f.log | cut -c1-160; done
for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; grep -h 'free-running' $O/$f.log | cut -c1-200; done
echo "-- product"; cat $O/load.log | cut -c1-120; tail -n 6 $O/product.log; tail -n 2 $O/connected1.log; tail -n 4 $O/studio.log | cut -c1-250

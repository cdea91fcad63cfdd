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
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run1; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-540} ))
for c in fa fb; do bash docs/perf/h200-lead6-unpack.sh .carry-$c $X >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }; done
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu
export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_WORKER=$P
( T 70 make-full $X/proscenium make-tiny /tmp/full --geometry full
  XDG_DATA_HOME=/tmp/xdgf XDG_CONFIG_HOME=/tmp/xdgc $X/proscenium serve --ui --model /tmp/full --backend cuda --batch 4 --port 18100 --settings "" > $O/serve.log 2>&1 &
  echo $! > $O/serve.pid; t0=$(date +%s)
  for i in $(seq 900); do
    curl -s http://127.0.0.1:18100/healthz > $O/status.json 2>/dev/null
    grep -q '"model_loaded":true' $O/status.json && break; [ $(date +%s) -ge $END ] && break; sleep 0.5; done
  echo "model loaded after $(( $(date +%s) - t0 )) s: $(cat $O/status.json)" > $O/load.log ) &
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
(cd /tmp && tar czf $OUT/run1.tgz --exclude=tokenizer.json run1)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O/*.log | sort | uniq -c | head -20
for f in tests-short tests-fast engine; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; end: $(tail -n 1 $O/$f.log | cut -c1-100)"; done
echo "===== tower33"; tail -n 32 $O/tower33.log | cut -c1-200
echo "===== dense33"; tail -n 40 $O/dense33.log | cut -c1-260
echo "===== product"; cat $O/load.log | cut -c1-200; tail -n 6 $O/product.log; tail -n 8 $O/connected1.log; tail -n 8 $O/studio.log | cut -c1-300

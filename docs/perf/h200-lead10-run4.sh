#!/bin/bash
# Lead, session 10, run 4 (one call, ≤ 420 s) on int4 = main + codec31 + gemm31 (its tile rule and
# q on the unsplit dense tiles by default) + tower31's t128r4u2 (the default for B ≥ 3): the
# take benches with the final defaults beside codec grouping off and main-stream priority on,
# the prefill beside the old GEMM choice, cloned voices of 10 and 30 s, the step and tower of B
# takes, exact's take; then, while serve loads a full-size checkpoint, the device tests under
# -test.short, the changed paths under fast, the free-running agreement with the CPU; then the
# product through serve.
# Carried: .carry-fa and .carry-fb (h200-lead6-build.sh). Logs: $OUT/run4.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run4; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-420} ))
for c in fa fb; do bash docs/perf/h200-lead6-unpack.sh .carry-$c $X >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }; done
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu
TK="bench-take -synthetic full -prompt 60 -frames 300 -takes 6 -batch 1,4 -rounds 2 -numerics fast"
T 30 take-default $P $TK
T 30 take-nogroup env PROSCENIUM_GPU_CODEC_GROUP=0 $P $TK
T 30 take-prio env PROSCENIUM_GPU_STREAM_PRIORITY=1 $P $TK
T 12 prefill-new $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 12 prefill-old env PROSCENIUM_GPU_GEMM_TILES=main PROSCENIUM_GPU_GEMM_VARIANT=none $P bench-backbone -synthetic full -numerics fast -prefills 60,300,700
T 25 ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 25 ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 10 rows $P bench-backbone -synthetic full -steps 50 -rows 1,2,4,8 -numerics fast
T 10 tower $P bench-tower -synthetic full -rows 1,2,4,8
T 20 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -numerics exact
export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_WORKER=$P
( T 60 make-full $X/proscenium make-tiny /tmp/full --geometry full
  XDG_DATA_HOME=/tmp/xdgf $X/proscenium serve --model /tmp/full --backend cuda --batch 4 --port 18100 --settings "" > $O/serve.log 2>&1 &
  echo $! > $O/serve.pid; t0=$(date +%s)
  for i in $(seq 600); do
    curl -s -X POST -H 'Content-Type: application/json' -d '[]' http://127.0.0.1:18100/api/ModelStatus > $O/status.json 2>/dev/null
    grep -q '"loaded"' $O/status.json && break; [ $(date +%s) -ge $END ] && break; sleep 0.5; done
  echo "model loaded after $(( $(date +%s) - t0 )) s" > $O/load.log ) &
LOADER=$!
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 70 agree-demo-fast $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 30 agree-odd-fast $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json
  (cd engine/cuda && T 60 tests-fast env PROSCENIUM_TEST_NUMERICS=fast $X/cuda.test -test.v -test.run '^(TestBackboneMatchesCPU|TestBackbonePrefillPassesMatchCPU|TestBackboneStepRowsMatchTakesAlone|TestTowerFrameRows|TestTakeFramesPCMMatchesAlone|TestFramesPrefixCacheMatchesUncached|TestGemmMmaVariants)$') ) &
AGREE=$!
(cd engine/cuda && T 175 tests-short $X/cuda.test -test.v -test.short -test.run 'Test[^B]')
wait $LOADER $AGREE
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
for k in 1 2 3; do T 25 connected$k python3 docs/perf/h200-lead9-concurrent.py 18100 4; done
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
(cd /tmp && tar czf $OUT/run4.tgz --exclude=tokenizer.json run4)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O/*.log | sort | uniq -c | head -20
for f in tests-short tests-fast; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; end: $(tail -n 1 $O/$f.log)"; done
for f in take-default take-nogroup take-prio take-exact; do echo "-- $f"; grep -hE "^take|takes after|first audio|batch [14]" $O/$f.log | cut -c1-200; done
for f in prefill-new prefill-old; do echo "-- $f"; grep -E '^(60|300|700) ' $O/$f.log; done
for f in ref10 ref30; do echo "-- $f"; grep -hE "uncached|from the cache" $O/$f.log | cut -c1-160; done
grep -hE "^B =" $O/rows.log | cut -c1-110; grep -h "^takes" $O/tower.log
for f in agree-demo-fast agree-odd-fast; do echo "-- $f"; tail -n 4 $O/$f.log | cut -c1-220; done
echo "-- product"; cat $O/load.log; tail -n 6 $O/product.log; cat $O/connected?.log | tail -n 9

#!/bin/bash
# Lead, session 9, run 2 (one call, ≤ 330 s) on main 9e40442 (step27c, grouped28 and flash28
# merged; a fast prefill groups its experts from one pair an expert; serve logs first_audio_ms):
# the prefill of short prompts on each expert path, the take benches under both policies, the
# tower frame of B takes; then, while serve loads a full-size checkpoint, the free-running
# agreement with the CPU (debug-take) and the device tests; then the product through serve.
# Carried: .carry-fa and .carry-fb from docs/perf/h200-lead6-build.sh. Logs: $OUT/run2.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run2; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-330} ))
for c in fa fb; do bash docs/perf/h200-lead6-unpack.sh .carry-$c $X >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }; done
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu
T 15 prefill-short $P bench-backbone -synthetic full -numerics fast -prefills 16,24,32,48,60
T 20 take-fast $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -numerics fast
T 18 take-exact $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -numerics exact
T 25 take-ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 35 take-batch $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 1,2,4,8
T 12 tower $P bench-tower -synthetic full -rows 1,2,4,8
# Meanwhile-block: serve loads a full-size checkpoint (disk-bound) while the agreement and tests run.
export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_WORKER=$P
( T 60 make-full $X/proscenium make-tiny /tmp/full --geometry full
  XDG_DATA_HOME=/tmp/xdgf $X/proscenium serve --model /tmp/full --backend cuda --batch 4 --port 18100 --settings "" > $O/serve.log 2>&1 &
  echo $! > $O/serve.pid; t0=$(date +%s)
  for i in $(seq 400); do
    curl -s -X POST -H 'Content-Type: application/json' -d '[]' http://127.0.0.1:18100/api/ModelStatus > $O/status.json 2>/dev/null
    grep -q '"loaded"' $O/status.json && break; [ $(date +%s) -ge $END ] && break; sleep 0.5; done
  echo "model loaded after $(( $(date +%s) - t0 )) s" > $O/load.log ) &
LOADER=$!
( for g in demo odd; do $P make-tiny -tokenizer $X/tokenizer.json -geometry $g /tmp/ck-$g > /dev/null; done
  T 70 agree-demo-fast $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 100 -frames 60 -numerics fast -out $O/agree-demo-fast.json
  T 30 agree-odd-fast $P debug-take -model /tmp/ck-odd -baseline 2 -seeds 20 -frames 60 -numerics fast -out $O/agree-odd-fast.json
  T 30 agree-demo-exact $P debug-take -model /tmp/ck-demo -baseline 0 -seeds 20 -frames 60 -numerics exact -out $O/agree-demo-exact.json ) &
AGREE=$!
(cd cmd/proscenium-gpu && T 60 engine-tests $X/proscenium-gpu.test -test.v -test.run 'TestCUDAEngineTiers|TestCUDAEngineBatchedTakes|TestCUDAExpertCacheHotSet')
(cd engine/cuda && T 100 tests-short $X/cuda.test -test.v -test.short -test.run 'Test[^B]')
wait $AGREE; wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
for k in 1 2 3; do T 25 concurrent$k python3 docs/perf/h200-lead5-concurrent.py 18100 4; done
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
(cd /tmp && tar czf $OUT/run2.tgz --exclude=tokenizer.json run2)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O/*.log | sort | uniq -c | head -20
for f in engine-tests tests-short; do echo "$f: $(grep -c -- '--- PASS' $O/$f.log) pass, $(grep -c -- '--- FAIL' $O/$f.log) fail; last: $(grep -E '^=== RUN' $O/$f.log | tail -1)"; done
echo "-- prefill-short"; tail -n 6 $O/prefill-short.log
for f in take-fast take-exact take-ref10 take-batch; do echo "-- $f"; grep -hE "real-time|first audio|backbone step|prefill|launches|^batch|uncached|from the cache|memory" $O/$f.log | head -10; done
echo "-- tower"; tail -n 5 $O/tower.log
for f in agree-demo-fast agree-odd-fast agree-demo-exact; do echo "-- $f"; tail -n 6 $O/$f.log | cut -c1-300; done
echo "-- product"; cat $O/load.log $O/product.log; cat $O/concurrent?.log | grep -v "^every"; grep -E "speech.*batch=" $O/serve.log | sed -E 's/.*time=[0-9-]+T([0-9:.]+)Z.*duration_ms=([0-9.]+).* (real_time_factor=[0-9.]+).*(first_audio_ms=[0-9.]+).*(batch=[0-9]+).*/\1 dur \2 \3 \4 \5/' | tail -17

#!/bin/bash
# Lead, session 9, run 3 (final, one call, ≤ 400 s) on main a319df0: Upload drains the stream
# (TestUploadAfterEnqueuedWork, also on a cuda.test built without that change: it must fail
# there), the device tests under -test.short while serve loads a full-size checkpoint, the
# take benches, and the product through serve --batch 4: a new 10 s voice's first and later
# requests, four concurrent streamed requests from connected clients (h200-lead9-concurrent.py)
# and from a cold Python client (h200-lead5-concurrent.py, as before).
# Carried: .carry-fa, .carry-fb (h200-lead6-build.sh) and .carry-fn (noup-cuda.test.xz: cuda.test
# of the same commit with engine/cuda/device/memory_cuda.go as before a319df0). Logs: $OUT/run3.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run3; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-400} ))
for c in fa fb; do bash docs/perf/h200-lead6-unpack.sh .carry-$c $X >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }; done
xz -dc .carry-fn/noup-cuda.test.xz > $X/noup-cuda.test && chmod +x $X/noup-cuda.test
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
export PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json \
  PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_DEMO_CODEC=$ROOT/engine/demo/codec.pth
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
P=$X/proscenium-gpu
(cd engine/cuda && T 20 upload-order $X/cuda.test -test.v -test.count 3 -test.run 'TestUploadAfterEnqueuedWork|TestDeltaNetChunkRule$')
(cd engine/cuda && T 20 upload-order-without $X/noup-cuda.test -test.v -test.count 3 -test.run 'TestUploadAfterEnqueuedWork')
T 20 take-fast $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -numerics fast
T 35 take-batch $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 1,4
export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_WORKER=$P
( T 60 make-full $X/proscenium make-tiny /tmp/full --geometry full
  XDG_DATA_HOME=/tmp/xdgf $X/proscenium serve --model /tmp/full --backend cuda --batch 4 --port 18100 --settings "" > $O/serve.log 2>&1 &
  echo $! > $O/serve.pid; t0=$(date +%s)
  for i in $(seq 600); do
    curl -s -X POST -H 'Content-Type: application/json' -d '[]' http://127.0.0.1:18100/api/ModelStatus > $O/status.json 2>/dev/null
    grep -q '"loaded"' $O/status.json && break; [ $(date +%s) -ge $END ] && break; sleep 0.5; done
  echo "model loaded after $(( $(date +%s) - t0 )) s" > $O/load.log ) &
LOADER=$!
(cd engine/cuda && T 170 tests-short $X/cuda.test -test.v -test.short -test.run 'Test[^B]')
wait $LOADER
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
for k in 1 2 3; do T 25 connected$k python3 docs/perf/h200-lead9-concurrent.py 18100 4; done
T 25 cold python3 docs/perf/h200-lead5-concurrent.py 18100 4
kill $(cat $O/serve.pid) 2>/dev/null; sleep 1
(cd /tmp && tar czf $OUT/run3.tgz --exclude=tokenizer.json run3)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
echo "== failures"; grep -hE "^(--- FAIL|FAIL)|^    --- FAIL|panic:" $O/*.log | sort | uniq -c | head -20
echo "-- upload-order"; grep -hE "^(--- |ok|FAIL|PASS)|upload_order" $O/upload-order.log | head -12
echo "-- upload-order without the drain"; grep -hE "^(--- |ok|FAIL|PASS)|upload_order" $O/upload-order-without.log | head -8
echo "tests-short: $(grep -c -- '--- PASS' $O/tests-short.log) pass, $(grep -c -- '--- FAIL' $O/tests-short.log) fail; last: $(grep -E '^=== RUN' $O/tests-short.log | tail -1); end: $(tail -n 1 $O/tests-short.log)"
for f in take-fast take-batch; do echo "-- $f"; grep -hE "real-time|first audio|backbone step|prefill|^batch" $O/$f.log | head -8; done
echo "-- product"; cat $O/load.log $O/product.log; cat $O/connected?.log $O/cold.log
grep -E "speech.*batch=" $O/serve.log | sed -E 's/.*time=[0-9-]+T([0-9:.]+)Z.*duration_ms=([0-9.]+).* (real_time_factor=[0-9.]+).*(first_audio_ms=[0-9.]+).*(batch=[0-9]+).*/\1 dur \2 \3 \4 \5/' | tail -21

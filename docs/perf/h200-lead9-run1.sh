#!/bin/bash
# Lead, session 9, run 1 (one call, ≤ 560 s): the three branches that waited for a device run,
# merged together (int38 = main + step27c + grouped28 + flash28): each branch's own script on
# the same binaries, then the take benches (fast B = 1, a 10 s and a 30 s voice, four takes
# together) and the product through serve --batch 4 at full geometry (a new 10 s voice's first
# and later requests, four concurrent streamed requests).
# Carried: .carry-fa and .carry-fb from docs/perf/h200-lead6-build.sh. Logs: $OUT/run1.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/run1; rm -rf $O; mkdir -p $O $X
START=$(date +%s); END=$(( START + ${BUDGET_S:-560} ))
for c in fa fb; do bash docs/perf/h200-lead6-unpack.sh .carry-$c $X >> $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }; done
gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
T() { local s=$1; shift; local n=$1; shift; local left=$(( END - $(date +%s) )); [ $left -lt $s ] && s=$left
  [ $s -lt 5 ] && { echo "skipped $n (budget)" >> $O/steps.log; return; }
  local t=$(date +%s); echo "== $(date -u +%T) $n (limit $s)" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n $(( $(date +%s)-t ))s" >> $O/steps.log; }
{ date -u; echo "HEAD $(cat .carry-fa/REV)"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } > $O/machine.txt 2>&1
T 92 step27c bash docs/perf/h200-step27c.sh $X $O/step27c
T 92 grouped28 bash docs/perf/h200-grouped28.sh $X $O/grouped28
T 92 flash28 bash docs/perf/h200-flash28.sh $X $O/flash28
P=$X/proscenium-gpu
T 20 take-fast $P bench-take -synthetic full -prompt 60 -frames 300 -takes 2 -numerics fast
T 25 take-ref10 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 10 -prompt-profile
T 30 take-ref30 $P bench-take -synthetic full -prompt 60 -frames 100 -ref-seconds 30 -prompt-profile
T 35 take-batch $P bench-take -synthetic full -prompt 60 -frames 300 -takes 1 -batch 1,4
# The product at full geometry through serve and the GPU worker.
export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_WORKER=$P
T 60 make-full $X/proscenium make-tiny /tmp/full --geometry full
XDG_DATA_HOME=/tmp/xdgf $X/proscenium serve --model /tmp/full --backend cuda --batch 4 --port 18100 --settings "" > $O/serve.log 2>&1 &
sp=$!; t0=$(date +%s)
for i in $(seq 200); do
  curl -s -X POST -H 'Content-Type: application/json' -d '[]' http://127.0.0.1:18100/api/ModelStatus > $O/status.json 2>/dev/null
  grep -q '"loaded"' $O/status.json && break; [ $(date +%s) -ge $END ] && break; sleep 0.5; done
echo "model loaded after $(( $(date +%s) - t0 )) s" > $O/load.log
T 45 product python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav
T 25 concurrent python3 docs/perf/h200-lead5-concurrent.py 18100 4
T 25 concurrent2 python3 docs/perf/h200-lead5-concurrent.py 18100 4
kill $sp; wait $sp 2>/dev/null
(cd /tmp && tar czf $OUT/run1.tgz --exclude=tokenizer.json run1)
echo "== steps ($(( $(date +%s)-START )) s)"; grep -E '^(rc=|skipped)' $O/steps.log | tr '\n' ' '; echo
for b in step27c grouped28 flash28; do echo "======== $b"; tail -c 2500 $O/$b.log; done
for f in take-fast take-ref10 take-ref30 take-batch; do echo "-- $f"; grep -hE "real-time|first audio|backbone step|prefill|launches|^batch|rows" $O/$f.log | head -8; done
echo "-- product"; cat $O/load.log $O/product.log; cat $O/concurrent.log $O/concurrent2.log 2>/dev/null | head -12; grep -i "batch=" $O/serve.log | tail -4

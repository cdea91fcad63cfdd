#!/bin/bash
# As carried: .carry-fa/ held this script, h200-lead6-unpack.sh as unpack.sh, the bundle that
# h200-lead6-build.sh packs, and a copy of h200-tier29-lead.sh without its debug-take caps.
# Lead's final run, part B (session 6): the take and serve checks, then the product at full
# geometry (make-tiny --geometry full on the device's disk): serve --batch 4 through the GPU
# worker, a cloned voice's first and later requests, four concurrent streamed requests.
# Carry .carry-fa and .carry-fb; run after part A on the same machine. Logs: $OUT/final-b.tgz.
set -u
ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/final-b; rm -rf $O; mkdir -p $O $X
[ -x $X/proscenium-gpu ] || bash .carry-fa/unpack.sh .carry-fa $X > $O/unpack-a.log 2>&1
bash .carry-fa/unpack.sh .carry-fb $X > $O/unpack.log 2>&1 || { cat $O/unpack.log; exit 3; }
[ -f $X/tokenizer.json ] || gunzip -c engine/demo/qwen3/tokenizer.json.gz > $X/tokenizer.json
cp kernels/servecheck.py kernels/run-serve-checks.sh kernels/run-take-checks.sh $X/
cp engine/audio/decode/testdata/ref.flac $X/ref.flac  # run-take-checks.sh's reference voice
export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_GPU_WORKER=$X/proscenium-gpu
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
T 45 take-checks bash $X/run-take-checks.sh /tmp/tc
cp /tmp/tc/*.log /tmp/tc/*.json $O/ 2>/dev/null
( time timeout 70 $X/proscenium make-tiny /tmp/full --geometry full ) > $O/make-full.log 2>&1
XDG_DATA_HOME=/tmp/xdgf $X/proscenium serve --model /tmp/full --backend cuda --batch 4 --port 18100 --settings "" > $O/serve.log 2>&1 &
sp=$!
t0=$(date +%s)
for i in $(seq 140); do
  curl -s -X POST -H 'Content-Type: application/json' -d '[]' http://127.0.0.1:18100/api/ModelStatus > $O/status.json 2>/dev/null
  grep -q '"loaded"' $O/status.json && break; sleep 0.5; done
echo "model loaded after $(( $(date +%s) - t0 )) s" > $O/product.log
timeout 45 python3 docs/perf/h200-lead5-product.py 18100 $ROOT/engine/audio/decode/testdata/ref.wav >> $O/product.log 2>&1
timeout 25 python3 docs/perf/h200-lead5-concurrent.py 18100 4 > $O/concurrent.log 2>&1; timeout 25 python3 docs/perf/h200-lead5-concurrent.py 18100 4 >> $O/concurrent.log 2>&1
kill $sp; wait $sp 2>/dev/null
(cd /tmp && tar czf $OUT/final-b.tgz final-b)
echo "== steps"; grep "^rc=" $O/steps.log | tr '\n' ' '; echo
grep -hE "FAIL|MISMATCH|mismatch|ok |PASS|identical|differ" $O/take-checks.log | head -20
tail -3 $O/make-full.log; cat $O/product.log; cat $O/concurrent.log; grep -i "batch=" $O/serve.log | tail -4

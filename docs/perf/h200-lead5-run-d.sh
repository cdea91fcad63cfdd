#!/bin/bash
# Lead's final run, part D: take and serve checks, four concurrent streamed requests to serve
# at --batch 4 and --batch 1 (h200-lead5-concurrent.py, carried as .carry-d/concurrent.py).
# Carry .carry-d (bundle.tar.xz: proscenium, proscenium-gpu.test, lib/ with the CLI's audio
# libraries); needs part C's .carry-x/proscenium-gpu on the same machine.
set -u
TAG=${1:-d}; ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/$TAG; mkdir -p $O
[ -x $X/proscenium-gpu ] || { echo "MISSING: part C's worker is not on this machine"; exit 3; }
(cd $X && tar xJf $ROOT/.carry-d/bundle.tar.xz)
cp kernels/servecheck.py kernels/run-serve-checks.sh kernels/run-take-checks.sh .carry-d/concurrent.py $X/
cp engine/audio/decode/testdata/ref.flac $X/ref.flac
export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec PROSCENIUM_GPU_WORKER=$X/proscenium-gpu
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
T 200 take-checks bash $X/run-take-checks.sh /tmp/tc
cp /tmp/tc/*.log /tmp/tc/*.json $O/ 2>/dev/null
T 150 serve-checks bash $X/run-serve-checks.sh /tmp/serve $ROOT/engine/audio/decode/testdata/ref.wav
cp /tmp/serve/*.log $O/ 2>/dev/null
$X/proscenium-gpu make-tiny -tokenizer $X/tokenizer.json /tmp/ck-conc > /dev/null
for b in 4 1; do
  XDG_DATA_HOME=/tmp/xdg$b $X/proscenium serve --model /tmp/ck-conc --backend cuda --batch $b --port 1809$b --settings "" > $O/serve-batch$b.log 2>&1 &
  sp=$!
  for i in $(seq 100); do curl -s -o /dev/null http://127.0.0.1:1809$b/healthz && break; sleep 0.2; done
  python3 $X/concurrent.py 1809$b 4 > $O/concurrent-batch$b.log 2>&1; python3 $X/concurrent.py 1809$b 4 >> $O/concurrent-batch$b.log 2>&1
  kill $sp; wait $sp 2>/dev/null
done
(cd /tmp && tar czf $OUT/$TAG.tgz $TAG)

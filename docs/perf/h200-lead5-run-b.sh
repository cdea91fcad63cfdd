#!/bin/bash
# Lead's merged run, part B: take and serve checks through the CLI and the worker (needs part A's
# .carry-x/proscenium-gpu on the same machine).
set -u
TAG=${1:-b}; ROOT=$PWD; X=$ROOT/.carry-x; O=/tmp/$TAG; mkdir -p $O
[ -x $X/proscenium-gpu ] || { echo "MISSING: part A's worker is not on this machine"; exit 3; }
(cd $X && tar xJf $ROOT/.carry-b/bundle.tar.xz)
cp kernels/servecheck.py kernels/run-serve-checks.sh kernels/run-take-checks.sh $X/
cp engine/audio/decode/testdata/ref.flac $X/ref.flac
export LD_LIBRARY_PATH=$X/lib PROSCENIUM_GPU_CKPTS=$ROOT/engine/cpu/testdata/backbone/ckpt PROSCENIUM_TINY_TOKENIZER=$X/tokenizer.json PROSCENIUM_CODEC_TESTDATA=$ROOT/engine/cpu/testdata/codec
T() { local s=$1; shift; local n=$1; shift; echo "== $(date -u +%T) $n" >> $O/steps.log; timeout $s "$@" > $O/$n.log 2>&1; echo "rc=$? $n" >> $O/steps.log; }
T 200 take-checks bash $X/run-take-checks.sh /tmp/tc
cp /tmp/tc/*.log /tmp/tc/*.json $O/ 2>/dev/null
T 150 serve-checks bash $X/run-serve-checks.sh /tmp/serve $ROOT/engine/audio/decode/testdata/ref.wav
cp /tmp/serve/*.log $O/ 2>/dev/null
(cd /tmp && tar czf $OUT/$TAG.tgz $TAG)
echo "== steps"; grep -E "^rc=" $O/steps.log | tr '\n' ' '; echo
grep -hE "^FAIL|passed|--- FAIL|identical|==|cached" $O/take-checks.log $O/serve-checks.log 2>/dev/null | tail -30

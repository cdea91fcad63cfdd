#!/bin/bash
# Builds mixers28's device bundle (cuda.test, proscenium-gpu; sm_90 kernels) from this worktree
# into /work/main/.carry-mixers28/bundle.tar.xz, the embedded demo codec and tokenizer cut out
# (docs/perf/carry-strip.py; h200-lead6-unpack.sh splices them back on the device).
set -eu
cd "$(dirname "$0")/../.."
export GOTOOLCHAIN=go1.27.3
B=/tmp/mixers28-bin; rm -rf $B; mkdir -p $B
nice -n 10 go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
nice -n 10 go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
d=/work/main/.carry-mixers28; mkdir -p $d; rm -rf $d/s; mkdir -p $d/s; : > $d/s/MANIFEST
for f in $B/cuda.test $B/proscenium-gpu; do
  n=$(basename $f); files=""
  for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do
    python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"
  done
  python3 docs/perf/carry-strip.py $f $d/s/$n $files > $d/s/$n.plan
  echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/s/MANIFEST
done
(cd $d/s && tar cf - . | xz -T2 -9 > ../bundle.tar.xz.tmp); rm -rf $d/s; mv $d/bundle.tar.xz.tmp $d/bundle.tar.xz
git rev-parse --short HEAD > $d/REV
ls -la $d/bundle.tar.xz

#!/bin/bash
# Builds tier29b's device bundle (the expert cache, issue 29) from this worktree into
# /work/main/.carry-tier29b: sm_90 kernels, the engine/cuda and cmd/proscenium-gpu test binaries and
# the worker, stripped of the embedded demo codec and tokenizer (docs/perf/carry-strip.py; the
# device's checkout splices them back: docs/perf/h200-lead6-unpack.sh).
set -eu
cd "$(dirname "$0")/../.."
export GOTOOLCHAIN=go1.27.3
rev=$(git rev-parse --short HEAD)
B=/tmp/tier29b-bin; rm -rf $B; mkdir -p $B
nice make kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90' >/tmp/tier29b-kernels.log 2>&1
nice go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
nice go test -tags cuda -c -ldflags "-s -w" -o $B/proscenium-gpu.test ./cmd/proscenium-gpu
nice go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
C=/work/main/.carry-tier29b; mkdir -p $C; d=/tmp/tier29b-pack; rm -rf $d; mkdir -p $d
: > $d/MANIFEST
for f in $B/cuda.test $B/proscenium-gpu.test $B/proscenium-gpu; do
  n=$(basename $f); files=""
  for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do
    python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"
  done
  python3 docs/perf/carry-strip.py $f $d/$n $files > $d/$n.plan
  echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/MANIFEST
done
(cd $d && tar cf - . | xz -T2 -9 > $C/bundle.tar.xz.tmp) && mv $C/bundle.tar.xz.tmp $C/bundle.tar.xz
echo "$rev" > $C/REV
du -sh $C/bundle.tar.xz

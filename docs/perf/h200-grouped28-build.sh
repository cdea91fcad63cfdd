#!/bin/bash
# Builds grouped28's device bundle from a checkout (default: this worktree) into CHECKOUT/.carry-grouped28:
# sm_90 kernels, the cuda test binary and the GPU worker (bench-backbone), stripped of the demo codec
# and tokenizer (docs/perf/carry-strip.py). On the device, from the root of the same checkout:
#   bash docs/perf/h200-lead6-unpack.sh .carry-grouped28 /tmp/grouped28-bin
#   bash docs/perf/h200-grouped28.sh /tmp/grouped28-bin $OUT/grouped28
set -eu
cd "${1:-/work/wt/grouped28}"
export GOTOOLCHAIN=go1.27.3
rev=$(git rev-parse --short HEAD)
B=/tmp/grouped28-bin; rm -rf $B; mkdir -p $B
nice -n 10 make kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90' >/tmp/grouped28-kernels.log 2>&1
nice -n 10 go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
nice -n 10 go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
d=$PWD/.carry-grouped28; rm -rf $d; mkdir -p $d/s
: > $d/s/MANIFEST
for f in $B/cuda.test $B/proscenium-gpu; do
  n=$(basename $f)
  files=""; for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do
    python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"; done
  python3 docs/perf/carry-strip.py $f $d/s/$n $files > $d/s/$n.plan
  echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/s/MANIFEST
done
(cd $d/s && tar cf - . | xz -T2 -9 > ../bundle.tar.xz); rm -rf $d/s
echo "$rev" > $d/REV
du -sh $d/bundle.tar.xz

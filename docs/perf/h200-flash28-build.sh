#!/bin/bash
# Builds flash28's device binaries (sm_90 kernels) from this checkout into BINDIR, and with CARRYDIR
# also packs them as docs/perf/h200-mixers28-build.sh does (the embedded demo codec and tokenizer cut
# out by carry-strip.py; on the device `bash docs/perf/h200-lead6-unpack.sh CARRYDIR BINDIR` splices
# them back and checks each sha256):
#   bash docs/perf/h200-flash28-build.sh BINDIR [CARRYDIR]
# cuda.test (engine/cuda's device tests) and proscenium-gpu (bench-backbone), as
# docs/perf/h200-lead6-build.sh builds them; docs/perf/h200-flash28.sh BINDIR OUTDIR runs them.
set -eu
cd "$(dirname "$0")/../.."
export GOTOOLCHAIN=go1.27.3
B=$1; mkdir -p $B
nice -n 10 make kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90' > $B/kernels.log 2>&1
nice -n 10 go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
nice -n 10 go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
git rev-parse --short HEAD > $B/REV
ls -la $B
[ $# -ge 2 ] || exit 0
d=$2; mkdir -p $d; rm -rf $d/s; mkdir -p $d/s; : > $d/s/MANIFEST
for f in $B/cuda.test $B/proscenium-gpu; do
  n=$(basename $f); files=""
  for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do
    python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"
  done
  python3 docs/perf/carry-strip.py $f $d/s/$n $files > $d/s/$n.plan
  echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/s/MANIFEST
done
(cd $d/s && tar cf - . | xz -T2 -9 > ../bundle.tar.xz.tmp); rm -rf $d/s; mv $d/bundle.tar.xz.tmp $d/bundle.tar.xz
cp $B/REV $d/REV
ls -la $d/bundle.tar.xz

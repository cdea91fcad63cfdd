#!/bin/bash
# Builds the lead's final device bundles from /work/main (HEAD) into .carry-fa (GPU binaries)
# and .carry-fb (the CLI with its audio libraries).
set -eu
cd /work/main
export GOTOOLCHAIN=go1.27.3
rev=$(git rev-parse --short HEAD)
B=/tmp/final-bin; rm -rf $B; mkdir -p $B/lib
nice make kernels KERNEL_GENCODE='-gencode=arch=compute_90,code=sm_90' >/tmp/final-kernels.log 2>&1
go test -tags cuda -c -ldflags "-s -w" -o $B/cuda.test ./engine/cuda
go test -tags cuda -c -ldflags "-s -w" -o $B/proscenium-gpu.test ./cmd/proscenium-gpu
go test -tags cuda -c -ldflags "-s -w" -o $B/kernels.test ./kernels
go build -tags cuda -ldflags "-s -w" -o $B/proscenium-gpu ./cmd/proscenium-gpu
go build -ldflags "-s -w" -o $B/proscenium ./cmd/proscenium
for l in libmpg123 libopusfile libfdk-aac libmp3lame libopusenc libsoxr librubberband libogg libopus libgomp libout123 libsyn123; do cp -L /lib/x86_64-linux-gnu/$l.so.* $B/lib/ 2>/dev/null || true; done
pack() { # dir binaries...
  local d=$1; shift; rm -rf $d; mkdir -p $d/s
  : > $d/s/MANIFEST
  for f in "$@"; do
    n=$(basename $f)
    files=""; for e in engine/demo/codec.pth engine/demo/qwen3/tokenizer.json.gz; do python3 -c "import sys;sys.exit(0 if open('$e','rb').read() in open('$f','rb').read() else 1)" && files="$files $e"; done
    python3 docs/perf/carry-strip.py $f $d/s/$n $files > $d/s/$n.plan
    echo "$n $(sha256sum < $f | cut -d' ' -f1)" >> $d/s/MANIFEST
  done
  (cd $d/s && tar cf - . | xz -T2 -9 > ../bundle.tar.xz); rm -rf $d/s
  echo "$rev" > $d/REV
  du -sh $d
}
pack .carry-fa $B/cuda.test $B/proscenium-gpu.test $B/kernels.test $B/proscenium-gpu
rm -rf .carry-fb; mkdir -p .carry-fb; pack .carry-fb $B/proscenium; (cd $B && tar cJf /work/main/.carry-fb/lib.tar.xz lib); du -sh .carry-fb
